"""What the tests share: the real server they run against, and a scriptable local HTTP server.

The real server is named by DOCINDEX_URL and DOCINDEX_API_KEY. Without them the live tests skip
and say so; with REQUIRE_PYTHON_CLIENT_TESTS=1 (CI) a missing server is a failure instead.
"""

import http.client
import http.server
import json
import os
import threading
import unittest
import uuid
from typing import Callable, List, Optional, Tuple

from docindex import Client

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def live_client(**options: float) -> Client:
    """A client for the server under test, or a skip (a failure when the tests are required)."""
    url = os.environ.get("DOCINDEX_URL")
    key = os.environ.get("DOCINDEX_API_KEY")
    if not url or not key:
        message = "DOCINDEX_URL and DOCINDEX_API_KEY are not set: no docindex server to test against"
        if os.environ.get("REQUIRE_PYTHON_CLIENT_TESTS") == "1":
            raise AssertionError(message + " (REQUIRE_PYTHON_CLIENT_TESTS=1)")
        raise unittest.SkipTest(message)
    return Client(base_url=url, api_key=key, **options)  # type: ignore[arg-type]


def run_tag() -> str:
    """A metadata value unique to one test, so tests sharing an organisation stay apart."""
    return "py-" + uuid.uuid4().hex


Reply = Tuple[int, List[Tuple[str, str]], bytes]
Handler = Callable[["RecordedRequest"], Optional[Reply]]


class RecordedRequest:
    """One request the local server received."""

    def __init__(self, method: str, path: str, headers: "http.client.HTTPMessage", body: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body


class ScriptedServer:
    """An HTTP server on 127.0.0.1 that answers each request with the next scripted reply.

    A reply of None closes the connection without answering (a network failure).
    """

    def __init__(self, replies: List[Optional[Reply]], host: str = "127.0.0.1") -> None:
        self.replies = list(replies)
        self.requests: List[RecordedRequest] = []
        outer = self

        class _Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append(RecordedRequest(self.command, self.path, self.headers, body))
                reply = outer.replies.pop(0) if outer.replies else (500, [], b"no reply scripted")
                if reply is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                status, headers, payload = reply
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _handle

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
                pass

        self._server = http.server.ThreadingHTTPServer((host, 0), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's base URL."""
        host, port = self._server.server_address[:2]
        return "http://{}:{}".format(host, port)

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def problem(status: int, code: str, detail: str, request_id: str = "req_local") -> bytes:
    """A problem+json body as docindex sends it."""
    return json.dumps(
        {
            "type": "https://docindex.dev/problems/" + code,
            "title": code,
            "status": status,
            "detail": detail,
            "code": code,
            "request_id": request_id,
        }
    ).encode("utf-8")
