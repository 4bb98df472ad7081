"""waitress with the connection limits that keep the table answered under a flood.

waitress alone serves every connection it accepts until ``connection_limit``
and then stops accepting: about a hundred idle, slow-header (slowloris) or
streaming connections from a guest on the table's Wi-Fi, with no PIN, froze
the table's own requests. ``GuardedServer`` is waitress's own server with a
few more rules, applied on its main loop where every connection is accepted:

- **per address**: one address may hold at most ``per_address`` connections
  that have not shown the table PIN; more are answered 503 and closed;
- **in all**: at most ``total`` connections (below waitress's own
  ``connection_limit``, which is never reached). Connections that have not
  shown the PIN may fill only ``total - reserved``: the ``reserved`` rest is
  kept for the table. A new connection that finds the share full makes room
  by closing the connection least worth keeping: first one idle or still
  sending its request (oldest first), then an SSE viewer that has not shown
  the PIN (oldest first). A connection whose request is being answered is
  never closed; if nothing can go, the newcomer gets the 503;
- **read timeouts**: a request's header must arrive whole within
  ``header_timeout`` seconds of its first byte (of the connection, for the
  first request), its body within ``body_timeout`` more; otherwise the
  connection is closed. waitress's own ``channel_timeout`` only counts
  silence, so a byte every few seconds kept a connection forever.

A connection "shows the PIN" when one of its requests is let through by the
PIN or a valid session (``mark_trusted``, called by the web layer through the
``eb.trust_connection`` environ key); from then on it counts against the
reserved share and is never closed to make room.

Request sizes are waitress's own adjustments (``serve`` sets them): bodies
over ``max_request_body_size`` are refused with 413 from the ``Content-Length``
(or as a chunked body grows) before any byte is kept, and every body allowed
stays in memory (``inbuf_overflow`` is above it), so nothing is spooled to disk.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from dataclasses import dataclass
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask

log = logging.getLogger(__name__)

#: what a refused connection is told before it is closed
_REFUSED = json.dumps({"error": "too_many_connections", "message": "The companion is too busy right now: try again in a few seconds."}).encode()
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\n"
    + f"Content-Length: {len(_REFUSED)}\r\n\r\n".encode()
    + _REFUSED
)

#: waitress's own errors (a body or a header too large, a malformed request) in the API's words
_WORDS = {
    400: ("bad_request", "The request could not be understood."),
    413: ("too_large", "The request is too large: the companion takes requests of at most {limit}."),
    431: ("headers_too_large", "The request's headers are too large."),
}


#: a connection younger than this is not closed to make room to make room for a guest (see ``GuardedServer._admit``)
EVICT_AFTER_S = 1.0


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits of ``GuardedServer`` (``serve`` reads them from the ``server.*`` settings)."""

    total: int = 200
    reserved: int = 40
    per_address: int = 24
    header_timeout: float = 10.0
    body_timeout: float = 20.0


class GuardedErrorTask(ErrorTask):
    """waitress's error answers (413, 431, 400) as the API's JSON, in a player's words."""

    def execute(self) -> None:
        error = self.request.error
        code, words = _WORDS.get(error.code, ("error", error.reason))
        limit = self.channel.server.adj.max_request_body_size
        body = json.dumps({"error": code, "message": words.format(limit=f"{limit // 1024} KiB")}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.extend([("Content-Type", "application/json"), ("Cache-Control", "no-store")])
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class GuardedTask(WSGITask):
    """Lets the app mark its connection as the table's (``eb.trust_connection``)."""

    def get_environment(self) -> dict[str, Any]:
        environ = super().get_environment()
        environ["eb.trust_connection"] = self.channel.mark_trusted
        return environ


class GuardedChannel(HTTPChannel):
    """waitress's connection, remembering when its current request began and what it is."""

    task_class = GuardedTask
    error_task_class = GuardedErrorTask

    def __init__(self, server: "GuardedServer", sock: socket.socket, addr: Any, adj: Adjustments, map: Any = None) -> None:  # noqa: A002 - waitress's name
        super().__init__(server, sock, addr, adj, map=map)
        self.trusted = False
        self.streaming = False  # an SSE viewer's request is being answered
        self.request_started: float | None = self.creation_time  # the first request's clock starts at connect

    def mark_trusted(self) -> None:
        self.trusted = True

    def received(self, data: bytes) -> bool:
        if data and self.request is None and self.request_started is None:
            self.request_started = time.time()
        result = super().received(data)
        if self.request is None:
            self.request_started = None  # every request received so far is whole
        if self.requests and not self.streaming:
            self.streaming = self.requests[0].path == "/api/events"
        return result

    def service(self) -> None:
        super().service()
        self.streaming = False

    @property
    def going(self) -> bool:
        return self.will_close or self.close_when_flushed or not self.connected


class GuardedServer(TcpWSGIServer):
    """waitress's TCP server with per-address and total caps and read timeouts (see the module)."""

    channel_class = GuardedChannel

    def __init__(self, application: Any, limits: ConnectionLimits, **kw: Any) -> None:
        self.limits = limits
        self.refused = 0
        self.evicted = 0
        self.timed_out = 0
        super().__init__(application, **kw)

    def _channels(self) -> list[GuardedChannel]:
        return [c for c in self.active_channels.values() if isinstance(c, GuardedChannel) and not c.going]

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:
            return
        addr = self.fix_addr(addr)
        if not self._admit(addr[0]):
            self.refused += 1
            _refuse(conn)
            return
        self.channel_class(self, conn, addr, self.adj, map=self._map)

    def _admit(self, address: str) -> bool:
        """Whether a new connection from ``address`` may come in, closing another to make room.

        Nobody can tell at connect time whether a newcomer is the table, so it
        comes in on probation when the guests' share is full: its request must
        show the PIN (``mark_trusted``) before enough newer connections push it
        out. The table sends its request at once; a flood's idle sockets do not.
        """
        # One pass over the connections (this runs for every connection a flood opens).
        everyone = 0
        guests = 0
        same_address = 0
        waiting: list[GuardedChannel] = []  # guests not being answered: idle, or still sending
        viewers: list[GuardedChannel] = []
        for c in self.active_channels.values():
            if not isinstance(c, GuardedChannel) or c.will_close or c.close_when_flushed or not c.connected:
                continue
            everyone += 1
            if c.trusted:
                continue
            guests += 1
            if c.addr[0] == address:
                same_address += 1
            if not c.requests:
                waiting.append(c)
            elif c.streaming:
                viewers.append(c)
        if same_address >= self.limits.per_address:
            return False
        if guests >= self.limits.total - self.limits.reserved:
            old = time.time() - EVICT_AFTER_S
            settled = [c for c in waiting if c.creation_time < old] or [c for c in viewers if c.creation_time < old]
            if settled:
                self._close(min(settled, key=_waiting_since))
                return True
        if everyone >= self.limits.total:
            if not waiting:
                return False  # every connection is the table's or being answered
            self._close(min(waiting, key=_waiting_since))
        return True

    def _close(self, victim: GuardedChannel) -> None:
        victim.will_close = True  # closed on the next turn of the loop; a viewer's stream sees it gone within a second
        self.evicted += 1

    def maintenance(self, now: float) -> None:
        """waitress's idle timeout, and the header and body read timeouts."""
        super().maintenance(now)
        for channel in self._channels():
            started = channel.request_started
            if started is None or channel.requests:
                continue
            request = channel.request
            allowed = self.limits.header_timeout
            if request is not None and request.headers_finished:
                allowed += self.limits.body_timeout
            if now - started > allowed:
                channel.will_close = True
                self.timed_out += 1


def _waiting_since(channel: GuardedChannel) -> float:
    return channel.request_started if channel.request_started is not None else channel.last_activity


def _refuse(conn: socket.socket) -> None:
    try:
        conn.setblocking(False)
        conn.send(REFUSAL)
    except OSError:
        pass
    finally:
        conn.close()


def create_guarded_server(application: Any, *, limits: ConnectionLimits, **adjustments: Any) -> GuardedServer:
    """Like ``waitress.create_server`` for one listening address, with ``GuardedServer``.

    waitress's ``connection_limit`` is set above ``limits.total`` so that
    waitress never stops accepting: ``GuardedServer`` decides who gets in.
    """
    adjustments.setdefault("connection_limit", limits.total + 50)
    adjustments.setdefault("cleanup_interval", 1)
    adj = Adjustments(**adjustments)
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    return GuardedServer(application, limits, map={}, dispatcher=dispatcher, adj=adj, sockinfo=adj.listen[0])
