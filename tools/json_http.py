"""What Provenance's two loopback JSON services share (the embedded DataHub endpoint, the assessment service):
replies written in one buffered segment, and a constant-time bearer-token check."""

from __future__ import annotations

import json
import secrets
from http.server import BaseHTTPRequestHandler
from typing import Any


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
