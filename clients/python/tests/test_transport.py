"""Retries, errors, uploads and waiting, against a scripted HTTP server on 127.0.0.1.

These need no docindex server: they pin down what the client does with answers a real server
gives only under load or failure (429, 503, a dropped connection, a redirect).
"""

import json
import os
import re
import socket
import tempfile
import time
import unittest
import uuid
from typing import Any, Dict, List

from docindex import (
    Client,
    DocindexError,
    InsufficientScopeError,
    NetworkError,
    RateLimitedError,
    ServiceUnavailableError,
    WaitTimeoutError,
    parse_retry_after,
)
from docindex.multipart import CHUNK_BYTES, MultipartBody, file_body_source

from .support import Reply, ScriptedServer, problem

ACK = json.dumps({"status": "accepted", "org_id": "org_1", "queued": 1, "document_ids": ["d1"]}).encode()
USAGE = json.dumps(
    {
        "org_id": "org_1",
        "period_days": 30,
        "total_queries": 0,
        "daily": [],
        "rate_limit_rpm": 600,
        "added_by_a_newer_server": {"ignored": True},
    }
).encode()


def rate_limited(seconds: str = "1") -> Reply:
    """A 429 as docindex sends it, asking for a wait of ``seconds``."""
    return 429, [("Content-Type", "application/problem+json"), ("Retry-After", seconds)], problem(
        429, "rate_limited", "Rate limit exceeded."
    )


def ok(body: bytes, status: int = 200) -> Reply:
    """A JSON success."""
    return status, [("Content-Type", "application/json")], body


def document(doc_id: str, status: str) -> Dict[str, Any]:
    """A document status record in the API's JSON shape."""
    return {
        "id": doc_id,
        "org_id": "org_1",
        "status": status,
        "source": {"type": "text", "filename": None, "url": None, "content_type": None, "bytes": None},
        "metadata": {},
        "chunk_size": 512,
        "chunk_overlap": 64,
        "tokenizer": "o200k_base",
        "chunk_count": None,
        "token_count": None,
        "content_sha256": None,
        "error": None,
        "attempts": 0,
        "created_at": "2025-01-01T00:00:00.000Z",
        "updated_at": "2025-01-01T00:00:00.000Z",
    }


class RetryTest(unittest.TestCase):
    def test_429_is_retried_after_retry_after_then_succeeds(self) -> None:
        with ScriptedServer([rate_limited("1"), rate_limited("1"), ok(USAGE)]) as server:
            client = Client(base_url=server.url, api_key="dix_test")
            started = time.monotonic()
            report = client.usage()
            elapsed = time.monotonic() - started
        self.assertEqual(report.rate_limit_rpm, 600)
        self.assertEqual(len(server.requests), 3)
        self.assertGreaterEqual(elapsed, 2.0, "each retry waits the second Retry-After asks for")

    def test_retries_stop_at_max_retries_with_the_last_error(self) -> None:
        with ScriptedServer([rate_limited("0")] * 5) as server:
            client = Client(base_url=server.url, api_key="dix_test", max_retries=2)
            with self.assertRaises(RateLimitedError) as caught:
                client.usage()
        self.assertEqual(len(server.requests), 3)
        error = caught.exception
        self.assertEqual((error.status, error.code), (429, "rate_limited"))
        self.assertEqual(error.retry_after_seconds, 0)
        self.assertEqual(error.request_id, "req_local")

    def test_a_retry_after_longer_than_max_retry_delay_fails_at_once(self) -> None:
        with ScriptedServer([rate_limited("30"), ok(USAGE)]) as server:
            client = Client(base_url=server.url, api_key="dix_test", max_retry_delay=5)
            started = time.monotonic()
            with self.assertRaises(RateLimitedError) as caught:
                client.usage()
        self.assertLess(time.monotonic() - started, 1)
        self.assertEqual(len(server.requests), 1)
        self.assertEqual(caught.exception.retry_after_seconds, 30)

    def test_a_retried_ingest_sends_the_same_idempotency_key(self) -> None:
        overloaded: Reply = (
            503,
            [("Content-Type", "application/problem+json"), ("Retry-After", "0")],
            problem(503, "overloaded", "Too many documents waiting."),
        )
        with ScriptedServer([overloaded, ok(ACK, 202)]) as server:
            client = Client(base_url=server.url, api_key="dix_test")
            ack = client.ingest_text(["hello"])
        self.assertEqual(ack.document_ids, ["d1"])
        keys = [request.headers["Idempotency-Key"] for request in server.requests]
        self.assertEqual(len(keys), 2)
        self.assertEqual(keys[0], keys[1])
        uuid.UUID(keys[0])
        self.assertEqual(json.loads(server.requests[1].body), {"documents": [{"text": "hello"}]})

    def test_a_503_past_the_retries_is_a_service_unavailable_error(self) -> None:
        down: Reply = (503, [("Retry-After", "0")], problem(503, "service_unavailable", "Database down."))
        with ScriptedServer([down, down]) as server:
            client = Client(base_url=server.url, api_key="dix_test", max_retries=1)
            with self.assertRaises(ServiceUnavailableError) as caught:
                client.usage()
        self.assertEqual(caught.exception.code, "service_unavailable")
        self.assertEqual(len(server.requests), 2)

    def test_a_key_without_the_scope_is_an_insufficient_scope_error(self) -> None:
        forbidden: Reply = (
            403,
            [("Content-Type", "application/problem+json")],
            problem(403, "insufficient_scope", "This API key lacks the `ingest` scope."),
        )
        with ScriptedServer([forbidden]) as server:
            client = Client(base_url=server.url, api_key="dix_test")
            with self.assertRaises(InsufficientScopeError) as caught:
                client.ingest_text(["hello"])
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "insufficient_scope"))
        self.assertIn("`ingest`", caught.exception.detail)
        self.assertEqual(len(server.requests), 1)

    def test_a_dropped_connection_is_retried_for_reads_and_keyed_ingests_only(self) -> None:
        with ScriptedServer([None, ok(USAGE)]) as server:
            Client(base_url=server.url, api_key="dix_test").usage()
        self.assertEqual(len(server.requests), 2)

        with ScriptedServer([None, ok(ACK, 202)]) as server:
            Client(base_url=server.url, api_key="dix_test").ingest_url("https://example.com/a.pdf")
        self.assertEqual(len(server.requests), 2)

        # A query is not resent: it may have run and counted towards usage.
        with ScriptedServer([None, ok(b"{}")]) as server:
            with self.assertRaises(NetworkError) as caught:
                Client(base_url=server.url, api_key="dix_test").query("salmon")
        self.assertEqual(len(server.requests), 1)
        self.assertEqual((caught.exception.status, caught.exception.code), (0, "network_error"))

    def test_an_unreachable_server_is_a_network_error(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        # Nothing listens on the port any more: every attempt is refused.
        client = Client(base_url="http://127.0.0.1:{}".format(port), api_key="dix_test", max_retries=1)
        with self.assertRaises(DocindexError) as caught:
            client.usage()
        error = caught.exception
        self.assertIsInstance(error, NetworkError)
        self.assertEqual((error.status, error.code), (0, "network_error"))
        self.assertIn("127.0.0.1", error.detail)

    def test_retry_after_as_an_http_date(self) -> None:
        self.assertEqual(parse_retry_after("7"), 7)
        self.assertIsNone(parse_retry_after(None))
        self.assertIsNone(parse_retry_after("soon"))
        later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
        self.assertAlmostEqual(parse_retry_after(later) or 0, 30, delta=2)
        self.assertEqual(parse_retry_after("Thu, 01 Jan 1970 00:00:00 GMT"), 0)


class ErrorTest(unittest.TestCase):
    def test_problem_fields_and_field_errors_are_kept(self) -> None:
        body = json.loads(problem(400, "invalid_request", "Invalid request: /chunk_size must be >= 128."))
        body["errors"] = [{"pointer": "/chunk_size", "message": "must be >= 128"}]
        reply: Reply = (400, [("Content-Type", "application/problem+json")], json.dumps(body).encode())
        with ScriptedServer([reply]) as server:
            with self.assertRaises(DocindexError) as caught:
                Client(base_url=server.url, api_key="dix_test").ingest_text(["x"], chunk_size=1)
        error = caught.exception
        self.assertEqual((error.status, error.code, error.title), (400, "invalid_request", "invalid_request"))
        self.assertEqual([(e.pointer, e.message) for e in error.errors], [("/chunk_size", "must be >= 128")])
        self.assertEqual(error.request_id, "req_local")

    def test_an_error_without_problem_json_is_an_invalid_response(self) -> None:
        headers = [("Content-Type", "text/html"), ("X-Request-Id", "gw-1")]
        reply: Reply = (502, headers, b"<h1>Bad gateway</h1>")
        with ScriptedServer([reply]) as server:
            with self.assertRaises(DocindexError) as caught:
                Client(base_url=server.url, api_key="dix_test").usage()
        self.assertEqual((caught.exception.status, caught.exception.code), (502, "invalid_response"))
        self.assertEqual(caught.exception.request_id, "gw-1")
        self.assertIn("Bad gateway", caught.exception.detail)

    def test_a_redirect_is_not_followed_with_the_api_key(self) -> None:
        with ScriptedServer([(302, [("Location", "http://127.0.0.1:9/elsewhere")], b"")]) as server:
            with self.assertRaises(DocindexError) as caught:
                Client(base_url=server.url, api_key="dix_test").usage()
        self.assertEqual(caught.exception.status, 302)
        self.assertEqual(len(server.requests), 1)


class WaitTest(unittest.TestCase):
    def test_a_timeout_lists_the_documents_still_pending(self) -> None:
        docs = [document("a", "ready"), document("b", "processing")]
        page = json.dumps({"documents": docs, "next_cursor": None})
        with ScriptedServer([ok(page.encode())] * 10) as server:
            client = Client(base_url=server.url, api_key="dix_test")
            with self.assertRaises(WaitTimeoutError) as caught:
                client.wait_ready(["a", "b"], timeout=0.3, poll_interval=0.1)
        error = caught.exception
        self.assertEqual(error.pending, ["b"])
        self.assertEqual([doc.status for doc in error.documents], ["ready", "processing"])
        self.assertIsInstance(error, DocindexError)
        # After the first poll only the pending document is asked about again.
        self.assertIn("ids=a%2Cb", server.requests[0].path)
        self.assertIn("ids=b&", server.requests[1].path + "&")

    def test_batch_status_asks_at_most_100_ids_per_request(self) -> None:
        ids = ["id-{}".format(n) for n in range(250)]
        pages = []
        for start in range(0, 250, 100):
            docs = [document(doc_id, "ready") for doc_id in ids[start : start + 100]]
            pages.append(ok(json.dumps({"documents": docs, "next_cursor": None}).encode()))
        with ScriptedServer(pages) as server:
            found = Client(base_url=server.url, api_key="dix_test").wait_ready(ids + ids[:5])
        self.assertEqual([doc.id for doc in found], ids)
        asked: List[int] = []
        for request in server.requests:
            match = re.search(r"[?&]ids=([^&]*)", request.path)
            assert match is not None
            asked.append(len(match.group(1).split("%2C")))
        self.assertEqual(asked, [100, 100, 50])


class MultipartTest(unittest.TestCase):
    def test_the_upload_streams_the_file_in_chunks_with_its_exact_length(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, 'big "report".txt')
            payload = os.urandom(3 * CHUNK_BYTES + 123)
            with open(path, "wb") as out:
                out.write(payload)
            open_file, size, close_after = file_body_source(path)
            fields = [("metadata", '{"a":"b"}')]
            name = os.path.basename(path)
            body = MultipartBody(fields, "file", name, "text/plain", open_file, size, close_after)
            pieces = list(body)
            self.assertEqual(sum(len(piece) for piece in pieces), len(body))
            self.assertLessEqual(max(len(piece) for piece in pieces[1:-1]), CHUNK_BYTES)
            self.assertGreater(len(pieces), 4, "the file goes out in several chunks, not one")
            # Iterating again (a retry) sends the same bytes.
            self.assertEqual(b"".join(body), b"".join(pieces))

            with ScriptedServer([ok(ACK, 202)]) as server:
                client = Client(base_url=server.url, api_key="dix_test")
                client.ingest_file(path, metadata={"team": "hr"})
        request = server.requests[0]
        self.assertEqual(int(request.headers["Content-Length"]), len(request.body))
        boundary = request.headers["Content-Type"].split("boundary=")[1]
        parts = request.body.split(b"--" + boundary.encode())
        self.assertEqual(parts[-1], b"--\r\n")
        metadata_part, file_part = parts[1], parts[2]
        self.assertIn(b'name="metadata"\r\n\r\n{"team": "hr"}\r\n', metadata_part)
        head = b'name="file"; filename="big %22report%22.txt"\r\nContent-Type: text/plain\r\n\r\n'
        self.assertIn(head, file_part)
        self.assertTrue(file_part.endswith(payload + b"\r\n"))

    def test_content_types_come_from_the_extension(self) -> None:
        expected = {
            "a.pdf": "application/pdf",
            "a.DOCX": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "a.md": "text/markdown",
            "a.htm": "text/html",
        }
        for name, content_type in expected.items():
            with ScriptedServer([ok(ACK, 202)]) as server:
                with tempfile.TemporaryDirectory() as folder:
                    path = os.path.join(folder, name)
                    with open(path, "wb") as out:
                        out.write(b"x")
                    Client(base_url=server.url, api_key="dix_test").ingest_file(path)
            self.assertIn("Content-Type: {}\r\n".format(content_type).encode(), server.requests[0].body, name)

    def test_a_file_that_shrinks_mid_upload_is_not_sent_short(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "a.txt")
            with open(path, "wb") as out:
                out.write(b"0123456789")
            open_file, _, close_after = file_body_source(path)
            body = MultipartBody([], "file", "a.txt", "text/plain", open_file, 20, close_after)
            with self.assertRaises(ValueError):
                list(body)




if __name__ == "__main__":
    unittest.main()
