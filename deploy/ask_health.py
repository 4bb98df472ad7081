"""What answers ``/api/health`` on this Pi's port, for ``install-pi.sh`` (run by path with the system's python3).

The installer asks twice: before it installs, who holds the port (this script's ``holder``), and after it restarted
the service, whether the new version answers (``wait``). Both read a companion in safe mode the same way: it answers
503 with ``"status": "safe_mode"`` and says why in ``headline`` and ``todo``.

    python3 ask_health.py holder PORT         free | companion | safe_mode | other
    python3 ask_health.py wait PORT SECONDS   answers | safe_mode HEADLINE TODO | silent
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import time
import urllib.error
import urllib.request


def _ask(port: int) -> tuple[bool, dict] | None:
    """What the server on ``port`` answers: whether it refused (an HTTP error) and its JSON body ({} where that is no
    JSON object); None where nothing answers."""
    refused = False
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5) as answer:
            body = json.load(answer)
    except urllib.error.HTTPError as refusal:
        refused = True
        try:
            body = json.load(refusal)
        except (ValueError, OSError, http.client.HTTPException):
            body = None
    except ValueError:
        body = None
    except (OSError, http.client.HTTPException):
        return None
    return refused, body if isinstance(body, dict) else {}


def _safe_mode(body: dict) -> bool:
    return body.get("status") == "safe_mode"


def holder(port: int) -> str:
    """Who holds ``port``: nobody, a companion (this script's install, running or in safe mode), or another program."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # connections closing (TIME_WAIT) are no holder; a listener is
    try:
        s.bind(("0.0.0.0", port))
        return "free"
    except OSError:
        pass
    finally:
        s.close()
    answer = _ask(port)
    if answer is None:
        return "other"
    refused, body = answer
    if _safe_mode(body):
        return "safe_mode"
    return "companion" if not refused and "version" in body else "other"  # another program may answer 503 too


def wait(port: int, seconds: float) -> str:
    """Whether the companion on ``port`` answers within ``seconds``: up (refusing this request counts: a host it does
    not trust), in safe mode and why, or silent."""
    end = time.monotonic() + seconds
    while True:
        answer = _ask(port)
        if answer is not None:
            body = answer[1]
            if _safe_mode(body):
                return ("safe_mode " + " ".join(str(body.get(k) or "") for k in ("headline", "todo"))).strip()
            return "answers"
        if time.monotonic() > end:
            return "silent"
        time.sleep(1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "holder":
        print(holder(int(sys.argv[2])))
    elif len(sys.argv) == 4 and sys.argv[1] == "wait":
        print(wait(int(sys.argv[2]), float(sys.argv[3])))
    else:
        sys.exit(__doc__)
