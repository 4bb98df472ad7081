"""Image routes take only challenge ids: every path trick is a 404 and serves no file."""

from __future__ import annotations

import http.client

import cv2
import numpy as np
import pytest

from companion.core.capture import Capture, ValuesDiceSource
from companion.app.web import close_app

from .conftest import PIN, PIN_HEADERS, build_app


def _jpeg() -> bytes:
    ok, data = cv2.imencode(".jpg", np.full((16, 16, 3), 200, np.uint8))
    assert ok
    return data.tobytes()


class FramingSource(ValuesDiceSource):
    """Values dice with a real JPEG frame, as a camera gives."""

    def capture(self):  # noqa: ANN201
        return Capture(super().capture().reading, frame_jpeg=_jpeg(), annotated_jpeg=_jpeg())


def traversal_paths(cid: str) -> list[str]:
    gid_token = cid[2:].rsplit("-", 1)[0]
    out = []
    for kind in ("image", "annotated"):
        out += [
            f"/api/challenges/../../config.toml/{kind}",
            f"/api/challenges/..%2f..%2fconfig.toml/{kind}",
            f"/api/challenges/%2e%2e%2f%2e%2e%2fconfig.toml/{kind}",
            f"/api/challenges/%252e%252e%252fconfig.toml/{kind}",
            f"/api/challenges/..%5c..%5cconfig.toml/{kind}",
            f"/api/challenges//etc/passwd/{kind}",
            f"/api/challenges/%2fetc%2fpasswd/{kind}",
            f"/api/challenges/{cid}%2f..%2f..%2fsecret_key/{kind}",
            f"/api/challenges/{cid}/../../secret_key",
            f"/api/challenges/c-..%2f..%2fsecret_key-1/{kind}",
            f"/api/challenges/c-{gid_token}-1.jpg/{kind}",
            f"/api/challenges/c-{gid_token}-1%00/{kind}",
            f"/api/challenges/c-{gid_token}-1-annotated/{kind}",
            f"/api/challenges/~%2f.ssh/{kind}",
        ]
    return out


def test_traversal_attempts_on_image_routes_get_404_and_no_file(tmp_path):
    instance = tmp_path / "instance"
    app = build_app(instance, FramingSource())
    client = app.test_client()
    try:
        gid = client.post("/api/games", json={"players": ["Ann", "Ben"]}, headers=PIN_HEADERS).get_json()["id"]
        client.post(f"/api/games/{gid}/claim", json={"amount": 5}, headers=PIN_HEADERS)
        challenge = client.post(f"/api/games/{gid}/bluff", json={}, headers=PIN_HEADERS).get_json()["challenge"]
        cid = challenge["id"]
        # The real routes work (so the 404s below are refusals, not a broken route).
        for url in (challenge["image_url"], challenge["annotated_url"]):
            ok = client.get(url)
            assert ok.status_code == 200 and ok.mimetype == "image/jpeg" and ok.data[:2] == b"\xff\xd8"
            ok.close()
        (instance / "config.toml").write_text('[table]\npin = "9999"\n')
        secret = (instance / "secret_key").read_bytes()
        for path in traversal_paths(cid):
            response = client.get(path)
            assert response.status_code == 404, path
            assert secret not in response.data and b"9999" not in response.data, path
            response.close()
    finally:
        close_app(app)


@pytest.mark.slow
def test_traversal_attempts_reach_the_real_server_unnormalised_and_get_404(live_server):
    """http.client sends each path byte for byte (no client-side clean-up of ``..``)."""
    s = live_server
    gid = s.post("/api/games", json={"players": ["Ann", "Ben"]}).json()["id"]
    s.post(f"/api/games/{gid}/claim", json={"amount": 5})
    cid = s.post(f"/api/games/{gid}/bluff", json={}).json()["challenge"]["id"]
    secret = (s.instance / "secret_key").read_bytes()
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    try:
        for path in traversal_paths(cid):
            conn.request("GET", path, headers={"X-Table-Pin": PIN})
            response = conn.getresponse()
            body = response.read()
            assert response.status == 404, (path, response.status)
            assert secret not in body and PIN.encode() not in body
    finally:
        conn.close()
