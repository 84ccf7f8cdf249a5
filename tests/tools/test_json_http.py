"""tools/json_http.py: the JSON reply and the bearer check both loopback services use."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from tools.json_http import STOP_POLL_SECONDS, JsonHandler


class Echo(JsonHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if not self.bearer_matches("s3cret"):
            self.reply(401, {"error": "wrong token"})
            return
        self.reply(200, {"path": self.path, "text": "naïve"})


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def get(port: int, headers: dict[str, str]) -> tuple[int, str | None, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/x?y=1", headers=headers)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def test_the_right_bearer_gets_the_json_reply(port: int) -> None:
    status, kind, body = get(port, {"Authorization": "Bearer s3cret"})
    assert (status, kind) == (200, "application/json")
    assert json.loads(body) == {"path": "/x?y=1", "text": "naïve"}


@pytest.mark.parametrize("header", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}])
def test_a_missing_or_wrong_bearer_is_refused(port: int, header: dict[str, str]) -> None:
    status, _, body = get(port, header)
    assert status == 401
    assert json.loads(body) == {"error": "wrong token"}
