"""What Provenance's two loopback JSON services share (the embedded DataHub endpoint, the assessment service):
replies written in one buffered segment, a constant-time bearer-token check, and a bound on open connections."""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_CONNECTIONS = 32
"""Connections served at once, each on a thread of its own; more get 503 at once instead of a thread each (200
stalled connections made 208 threads before the bound)."""
_BUSY_BODY = b'{"message": "too many open connections: retry in a moment", "status": 503}'
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
    + f"Content-Length: {len(_BUSY_BODY)}\r\n\r\n".encode()
    + _BUSY_BODY
)


class Activity:
    """When this process last served a request (any BoundedHTTPServer of it): a warm service exits when idle."""

    _last = time.monotonic()

    @classmethod
    def touch(cls) -> None:
        cls._last = time.monotonic()

    @classmethod
    def idle_seconds(cls) -> float:
        return time.monotonic() - cls._last


STOP_POLL_SECONDS = 0.05


class BoundedHTTPServer(ThreadingHTTPServer):
    """A threading server with at most `max_connections` connections (threads) open at once."""

    daemon_threads = True
    request_queue_size = 128  # connections the kernel holds until accepted; at 5, a burst waits on SYN retries

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int = 0):
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_connections or MAX_CONNECTIONS)

    def serve_forever(self, poll_interval: float = STOP_POLL_SECONDS) -> None:
        # shutdown() returns when the loop next polls: after up to 0.5 s at the standard library's default, on every
        # stop of an embedded catalog or the assessment service
        super().serve_forever(poll_interval)

    def process_request(self, request: Any, client_address: Any) -> None:
        Activity.touch()
        if not self._slots.acquire(blocking=False):
            try:
                request.sendall(_BUSY)
            except OSError:
                pass  # the client is gone already; the connection is closed either way
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class JsonHandler(BaseHTTPRequestHandler):
    # Headers and body leave in one segment: unbuffered writes of small pieces on a keep-alive connection meet
    # the client's delayed ACK and cost ~40 ms per request.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def reply(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def bearer_matches(self, token: str) -> bool:
        return secrets.compare_digest(self.headers.get("Authorization", ""), f"Bearer {token}")

    def read_body(self, limit: int) -> bytes | None:
        """The request body, at most `limit` bytes; None after replying 400 (a bad Content-Length) or 413 (too large).
        Call it only after the caller is authenticated: nothing is read for anyone else."""
        text = self.headers.get("Content-Length") or "0"
        try:
            length = int(text)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            self.reply(400, {"message": f"bad Content-Length {text[:20]!r}", "status": 400})
            return None
        if length > limit:
            self.close_connection = True
            self.reply(
                413, {"message": f"request body of {length} bytes is over the {limit}-byte limit", "status": 413}
            )
            return None
        return self.rfile.read(length) if length else b""
