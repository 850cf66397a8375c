"""The client against a real docindex server (DOCINDEX_URL, DOCINDEX_API_KEY).

Every test tags what it ingests with its own metadata value, so tests sharing the organisation
do not see each other's documents in queries.
"""

import os
import tempfile
import time
import unittest
import uuid
from typing import Optional

from docindex import (
    Client,
    DocindexError,
    Document,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
    TextDocument,
    UnauthorizedError,
)

from .support import REPO_ROOT, live_client, run_tag

WAIT_SECONDS = 60.0
# More than twice the rate-limited organisation's allowance (the CI script gives it 3 a minute).
MAX_LIMITED_REQUESTS = 25


class IngestAndQueryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def test_ingested_text_is_found_by_query_once_ready(self) -> None:
        tag = run_tag()
        ack = self.client.ingest_text(
            [
                TextDocument("Salmon swim upstream to spawn in the river of their birth.", {"run": tag}),
                {"text": "Barn owls hunt voles at night over open fields.", "metadata": {"run": tag}},
            ],
            chunk_size=256,
            chunk_overlap=32,
        )
        self.assertEqual(ack.status, "accepted")
        self.assertEqual(ack.queued, 2)
        self.assertEqual(len(ack.document_ids), 2)
        self.assertFalse(ack.replayed)

        docs = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)
        self.assertEqual([doc.id for doc in docs], ack.document_ids)
        self.assertEqual({doc.status for doc in docs}, {"ready"})
        self.assertEqual(docs[0].chunk_size, 256)
        self.assertEqual(docs[0].chunk_overlap, 32)
        self.assertEqual(docs[0].source.type, "text")
        self.assertEqual(docs[0].metadata, {"run": tag})
        self.assertEqual(len(docs[0].content_sha256 or ""), 64)

        answer = self.client.query("salmon spawn", top_k=5, filter={"run": tag})
        self.assertEqual(answer.org_id, ack.org_id)
        self.assertEqual([hit.document_id for hit in answer.results], [ack.document_ids[0]])
        hit = answer.results[0]
        self.assertIn("Salmon swim upstream", hit.text)
        self.assertGreater(hit.score, 0)
        self.assertEqual(hit.metadata, {"run": tag})

        # A filter with a list of values, and document_ids, narrow the same search.
        both = self.client.query("owls salmon", filter={"run": [tag, "other"]})
        self.assertEqual({hit.document_id for hit in both.results}, set(ack.document_ids))
        only_owls = self.client.query("owls salmon", document_ids=[ack.document_ids[1]])
        self.assertEqual([hit.document_id for hit in only_owls.results], [ack.document_ids[1]])

        # Keyword mode: the keyword score (BM25's share of the query's most) is the score; no
        # semantic list on this server.
        keyword = self.client.query(
            "owls salmon", mode="keyword", filter={"run": tag}, max_chunks_per_document=1, score_threshold=0
        )
        self.assertEqual(keyword.mode, "keyword")
        self.assertFalse(keyword.degraded)
        self.assertEqual({hit.document_id for hit in keyword.results}, set(ack.document_ids))
        for hit in keyword.results:
            self.assertEqual(hit.keyword_score, hit.score)
            self.assertGreater(hit.score, 0)
            self.assertLessEqual(hit.score, 1)
            self.assertIsNone(hit.semantic_score)
            self.assertIsNone(hit.rerank_score)
        self.assertEqual(keyword.degraded_reasons, [])
        with self.assertRaises(DocindexError) as refused:
            self.client.query("owls", mode="semantic")
        self.assertEqual(refused.exception.code, "semantic_search_unavailable")
        # No reranker on this server: asking for one is refused, declining it is a plain query.
        with self.assertRaises(DocindexError) as no_reranker:
            self.client.query("owls", rerank=True, rerank_candidates=20)
        self.assertEqual(no_reranker.exception.code, "rerank_unavailable")
        self.assertEqual(len(self.client.query("owls salmon", rerank=False, filter={"run": tag}).results), 2)

    def test_metadata_is_updated_and_filters_see_it_at_once(self) -> None:
        tag = run_tag()
        ack = self.client.ingest_text([TextDocument("Wombats dig long burrows.", {"run": tag, "stage": "draft"})])
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)
        chunks = self.client.list_chunks(ack.document_ids[0], limit=5)
        self.assertEqual([chunk.index for chunk in chunks.chunks], [0])
        self.assertEqual(chunks.chunks[0].text, "Wombats dig long burrows.")
        self.assertIsNone(chunks.next_cursor)
        doc = self.client.update_metadata(ack.document_ids[0], {"stage": None, "reviewed": tag})
        self.assertEqual(doc.metadata, {"run": tag, "reviewed": tag})
        found = self.client.query("wombats", filter={"reviewed": tag})
        self.assertEqual([hit.document_id for hit in found.results], ack.document_ids)
        self.assertEqual(self.client.query("wombats", filter={"stage": "draft", "run": tag}).results, [])
        with self.assertRaises(DocindexError) as raised:
            self.client.update_metadata(ack.document_ids[0], {"n": 1})  # type: ignore[dict-item]
        self.assertEqual((raised.exception.status, raised.exception.code), (400, "invalid_request"))

    def test_partitions_on_ingest_query_list_and_delete(self) -> None:
        tag = run_tag()
        river = "river-" + uuid.uuid4().hex[:12]
        sea = "sea-" + uuid.uuid4().hex[:12]
        ack = self.client.ingest_text(
            [
                TextDocument("Otters hold hands while they sleep.", {"run": tag}),
                TextDocument("Otters crack shells on their bellies.", {"run": tag}, partition=sea),
            ],
            partition=river,
        )
        docs = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)
        self.assertEqual([doc.partition for doc in docs], [river, sea])
        found = self.client.query("otters", filter={"run": tag}, partitions=[sea])
        self.assertEqual([hit.document_id for hit in found.results], ack.document_ids[1:])
        listed = self.client.list_documents(partitions=[river])
        self.assertEqual([doc.id for doc in listed.documents], ack.document_ids[:1])
        names = {p["name"]: p for p in self.client.list_partitions()}
        self.assertEqual(names[river]["documents"], 1)
        self.assertEqual(self.client.delete_documents(document_ids=ack.document_ids, partitions=[river]).deleted, 1)
        self.assertEqual(self.client.delete_partition(sea), {"status": "accepted", "partition": sea})

    def test_access_lists_and_principals(self) -> None:
        tag = run_tag()
        eng = "group:eng-" + uuid.uuid4().hex[:12]
        hr = "group:hr-" + uuid.uuid4().hex[:12]
        ack = self.client.ingest_text(
            [
                TextDocument("Beavers build dams of branches.", {"run": tag}, access=[hr]),
                TextDocument("Beavers gnaw through trunks.", {"run": tag}),
            ],
            access=[eng],
        )
        hr_doc, eng_doc = ack.document_ids
        docs = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)
        self.assertEqual([doc.access for doc in docs], [[hr], [eng]])
        found = self.client.query("beavers", filter={"run": tag}, principals=[eng])
        self.assertEqual([hit.document_id for hit in found.results], [eng_doc])
        listed = self.client.list_documents(ids=ack.document_ids, principals=[eng])
        self.assertEqual([doc.id for doc in listed.documents], [eng_doc])
        self.assertEqual(self.client.get_document(eng_doc, principals=[eng]).id, eng_doc)
        with self.assertRaises(DocindexError) as raised:
            self.client.get_document(hr_doc, principals=[eng])
        self.assertEqual(raised.exception.status, 404)
        with self.assertRaises(DocindexError) as hidden:
            self.client.get_document_content(hr_doc, principals=[])
        self.assertEqual(hidden.exception.status, 404)
        self.assertEqual(self.client.update_access(hr_doc, [eng]).access, [eng])
        self.assertEqual(self.client.get_document(hr_doc, principals=[eng]).access, [eng])
        self.assertIsNone(self.client.update_access(hr_doc, None).access)
        self.assertEqual(self.client.delete_documents(document_ids=ack.document_ids, principals=[]).deleted, 1)

    def test_wait_reports_progress(self) -> None:
        ack = self.client.ingest_text(["progress " + run_tag()])
        seen = []
        docs = self.client.wait_for_documents(ack.document_ids, timeout=WAIT_SECONDS, on_progress=seen.append)
        self.assertEqual(docs[0].status, "ready")
        self.assertEqual((seen[-1].total, seen[-1].ready), (1, 1))
        self.assertEqual(seen[-1].documents, docs)

    def test_waiting_for_an_unknown_document_is_a_404(self) -> None:
        with self.assertRaises(NotFoundError) as caught:
            self.client.wait_for_documents([str(uuid.uuid4())], timeout=5)
        self.assertEqual(caught.exception.status, 404)


class FileUploadTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def _upload(self, path: str, tag: str, **options: str) -> Document:
        ack = self.client.ingest_file(path, metadata={"run": tag}, **options)
        self.assertEqual(ack.queued, 1)
        (doc,) = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)
        return doc

    def test_a_file_is_chunked_with_the_settings_given(self) -> None:
        tag = run_tag()
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "terns.txt")
            with open(path, "w", encoding="utf-8") as out:
                out.write("Arctic terns fly from one pole to the other every year. " * 200)
            ack = self.client.ingest_file(path, metadata={"run": tag}, chunk_size=128, chunk_overlap=0)
            with self.assertRaises(InvalidRequestError) as caught:
                self.client.ingest_file(path, chunk_size=4097)
        self.assertEqual([field.pointer for field in caught.exception.errors], ["/chunk_size"])
        (doc,) = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)
        self.assertEqual(doc.status, "ready", doc.error)
        self.assertEqual((doc.chunk_size, doc.chunk_overlap), (128, 0))
        chunks = self.client.list_chunks(doc.id, limit=100).chunks
        self.assertGreater(len(chunks), 10)
        self.assertTrue(all(chunk.token_count <= 128 for chunk in chunks))

    def test_text_and_markdown_files_are_uploaded_and_searchable(self) -> None:
        tag = run_tag()
        with tempfile.TemporaryDirectory() as folder:
            txt = os.path.join(folder, "kestrels.txt")
            with open(txt, "w", encoding="utf-8") as out:
                # Larger than one streamed chunk, so the body really goes out in pieces.
                out.write("Kestrels hover over motorway verges. " * 20000)
            md = os.path.join(folder, "Notes ü.md")
            with open(md, "w", encoding="utf-8") as out:
                out.write("# Herons\n\nGrey herons stand still in shallow water.\n")

            doc = self._upload(txt, tag)
            self.assertEqual(doc.status, "ready", doc.error)
            self.assertEqual(doc.source.type, "file")
            self.assertEqual(doc.source.filename, "kestrels.txt")
            self.assertEqual(doc.source.content_type, "text/plain")
            self.assertEqual(doc.source.bytes, os.path.getsize(txt))
            self.assertEqual(doc.metadata, {"run": tag})

            doc = self._upload(md, tag)
            self.assertEqual(doc.status, "ready", doc.error)
            self.assertEqual(doc.source.filename, "Notes ü.md")
            self.assertEqual(doc.source.content_type, "text/markdown")

        hits = self.client.query("grey herons", filter={"run": tag}).results
        self.assertEqual([hit.document_id for hit in hits], [doc.id])

    def test_the_repository_pdf_is_extracted_with_pages(self) -> None:
        tag = run_tag()
        pdf = os.path.join(REPO_ROOT, "test", "fixtures", "extract", "hyphenation.pdf")
        if not os.path.exists(pdf):
            self.skipTest("not in a docindex checkout: {} is missing".format(pdf))
        doc = self._upload(pdf, tag)
        self.assertEqual(doc.status, "ready", doc.error)
        self.assertEqual(doc.source.content_type, "application/pdf")
        self.assertEqual(doc.source.bytes, os.path.getsize(pdf))
        self.assertGreater(doc.chunk_count or 0, 0)
        # The fixture's marker sentence for its second page (test/fixtures/extract/hyphenation.ms).
        hits = self.client.query("delta echo foxtrot", filter={"run": tag}).results
        self.assertEqual([hit.document_id for hit in hits], [doc.id])
        self.assertIn("foxtrot", hits[0].text)
        self.assertLessEqual(hits[0].page_start or 0, 2)
        self.assertGreaterEqual(hits[0].page_end or 0, 2)

    def test_a_file_object_is_uploaded_under_the_name_given(self) -> None:
        tag = run_tag()
        with tempfile.TemporaryFile() as handle:
            handle.write(b"Puffins nest in burrows on sea cliffs.")
            handle.seek(0)
            ack = self.client.ingest_file(handle, filename="puffins.txt", metadata={"run": tag})
        (doc,) = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)
        self.assertEqual(doc.status, "ready", doc.error)
        self.assertEqual(doc.source.filename, "puffins.txt")

    def test_text_and_original_file_are_read_back(self) -> None:
        tag = run_tag()
        with tempfile.TemporaryFile() as handle:
            handle.write("Gannets dive from thirty metres. ✓\n".encode("utf-8"))
            handle.seek(0)
            ack = self.client.ingest_file(handle, filename="gannets ✓.txt", metadata={"run": tag})
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)
        self.assertEqual(self.client.get_document_content(ack.document_ids[0]), "Gannets dive from thirty metres. ✓\n")
        original = self.client.get_document_file(ack.document_ids[0])
        self.assertEqual(original.data, "Gannets dive from thirty metres. ✓\n".encode("utf-8"))
        self.assertEqual(original.content_type, "text/plain")
        self.assertEqual(original.filename, "gannets ✓.txt")

    def test_versions_by_external_id_replace_content_and_reprocess(self) -> None:
        tag = run_tag()
        key = "birds/" + tag
        first = self.client.ingest_text([TextDocument("Skuas chase gulls.", {"run": tag}, external_id=key)])
        document_id = first.document_ids[0]
        self.client.wait_ready([document_id], timeout=WAIT_SECONDS)

        def wait_for(version: int) -> Document:
            deadline = time.monotonic() + WAIT_SECONDS
            while time.monotonic() < deadline:
                doc = self.client.get_document(document_id)
                if doc.version == version and doc.pending_version is None and doc.done:
                    return doc
                time.sleep(0.05)
            self.fail("version {} did not become current".format(version))

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "skuas.txt")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("Skuas nest on moorland.")
            again = self.client.ingest_file(path, external_id=key)
        self.assertEqual(again.document_ids, [document_id])
        self.assertEqual(wait_for(2).external_id, key)
        self.assertEqual(self.client.get_document_content(document_id), "Skuas nest on moorland.")
        found = self.client.get_document_by_external_id(key)
        self.assertIsNotNone(found)
        self.assertEqual(found.id if found else None, document_id)
        ack = self.client.replace_content(document_id, text="Skuas steal fish.")
        self.assertEqual((ack.document_id, ack.version), (document_id, 3))
        wait_for(3)
        self.assertEqual(self.client.get_document_content(document_id), "Skuas steal fish.")
        reprocessed = self.client.reprocess_document(document_id, chunk_size=128, chunk_overlap=0)
        self.assertEqual(reprocessed.version, 4)
        self.assertEqual(wait_for(4).chunk_size, 128)
        with self.assertRaises(NotFoundError):
            self.client.replace_content(str(uuid.uuid4()), text="nobody")
        with self.assertRaises(ValueError):
            self.client.replace_content(document_id)

    def test_an_unsupported_file_is_refused(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "data.bin")
            with open(path, "wb") as out:
                out.write(b"\x00\x01\x02 not a document")
            with self.assertRaises(DocindexError) as caught:
                self.client.ingest_file(path)
        self.assertEqual(caught.exception.status, 415)
        self.assertEqual(caught.exception.code, "unsupported_media_type")


class UrlIngestTest(unittest.TestCase):
    def test_a_loopback_url_is_refused_by_the_ssrf_policy(self) -> None:
        client = live_client()
        with self.assertRaises(InvalidRequestError) as caught:
            client.ingest_url("http://127.0.0.1:9/report.pdf", {"run": run_tag()})
        error = caught.exception
        self.assertIsInstance(error, DocindexError)
        self.assertEqual(error.status, 400)
        self.assertEqual(error.code, "invalid_request")
        self.assertEqual([field.pointer for field in error.errors], ["/url"])
        self.assertTrue((error.request_id or "").startswith("req_"), error.request_id)
        self.assertIn("public", error.detail)

    def test_chunk_settings_are_sent_and_checked(self) -> None:
        client = live_client()
        with self.assertRaises(InvalidRequestError) as caught:
            client.ingest_url("https://example.com/report.pdf", chunk_size=256, chunk_overlap=256)
        self.assertEqual([field.pointer for field in caught.exception.errors], ["/chunk_overlap"])


class DocumentsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def test_list_pages_through_documents_newest_first(self) -> None:
        ack = self.client.ingest_text(["page {} {}".format(n, run_tag()) for n in range(5)])
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)

        first = self.client.list_documents(limit=2)
        self.assertEqual(len(first.documents), 2)
        self.assertIsNotNone(first.next_cursor)
        second = self.client.list_documents(limit=2, cursor=first.next_cursor)
        self.assertEqual(len(second.documents), 2)
        self.assertFalse({d.id for d in first.documents} & {d.id for d in second.documents})

        listed = [doc.id for doc in self.client.iterate_documents(page_size=3)]
        self.assertEqual(len(listed), len(set(listed)))
        self.assertTrue(set(ack.document_ids) <= set(listed))
        # One request ingested them together; newest first keeps them next to each other.
        positions = sorted(listed.index(doc_id) for doc_id in ack.document_ids)
        self.assertEqual(positions, list(range(positions[0], positions[0] + 5)))

        ready = self.client.list_documents(status="ready", limit=100).documents
        self.assertTrue(all(doc.status == "ready" for doc in ready))

    def test_get_batch_status_and_content_hash(self) -> None:
        text = "batch status " + run_tag()
        ack = self.client.ingest_text([text, text + " other"])
        docs = self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)

        doc = self.client.get_document(ack.document_ids[0])
        self.assertEqual(doc, docs[0])

        # More ids than one request may carry: two requests, order kept, unknown ids left out.
        unknown = [str(uuid.uuid4()) for _ in range(150)]
        asked = unknown[:70] + [ack.document_ids[1]] + unknown[70:] + [ack.document_ids[0]]
        found = self.client.get_documents(asked)
        self.assertEqual([d.id for d in found], [ack.document_ids[1], ack.document_ids[0]])

        page = self.client.list_documents(ids=ack.document_ids)
        self.assertEqual({d.id for d in page.documents}, set(ack.document_ids))
        with self.assertRaises(ValueError):
            self.client.list_documents(ids=unknown[:101])

        same = self.client.list_documents(content_sha256=docs[0].content_sha256)
        self.assertEqual([d.id for d in same.documents], [ack.document_ids[0]])

    def test_a_deleted_document_is_a_404_with_a_request_id(self) -> None:
        ack = self.client.ingest_text(["to be deleted " + run_tag()])
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS)
        self.assertIsNone(self.client.delete_document(ack.document_ids[0]))
        with self.assertRaises(NotFoundError) as caught:
            self.client.get_document(ack.document_ids[0])
        error = caught.exception
        self.assertEqual(error.status, 404)
        self.assertEqual(error.code, "not_found")
        self.assertTrue((error.request_id or "").startswith("req_"), error.request_id)
        self.assertIn("404 not_found", str(error))
        with self.assertRaises(NotFoundError):
            self.client.delete_document(ack.document_ids[0])

    def test_filters_with_operators_and_delete_by_filter(self) -> None:
        tag = run_tag()
        ack = self.client.ingest_text(
            [
                TextDocument("Gannets plunge into the sea.", {"run": tag, "year": "2019"}),
                TextDocument("Gannets nest in colonies.", {"run": tag, "year": "2022"}),
                TextDocument("Gannets fly far.", {"run": tag}),
            ]
        )
        old, recent, undated = ack.document_ids
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)

        found = self.client.query("gannets", filter={"run": tag, "year": {"$gte": "2020"}})
        self.assertEqual([hit.document_id for hit in found.results], [recent])
        page = self.client.list_documents(filter={"run": tag, "year": {"$exists": False}})
        self.assertEqual([doc.id for doc in page.documents], [undated])
        either = self.client.iterate_documents(filter={"run": tag, "$or": [{"year": ("2019",)}, {"year": "2022"}]})
        self.assertEqual({doc.id for doc in either}, {old, recent})

        with self.assertRaises(InvalidRequestError) as caught:
            self.client.query("gannets", filter={"year": {"$after": "2020"}})
        self.assertEqual([error.pointer for error in caught.exception.errors], ["/filter/year/$after"])

        deleted = self.client.delete_documents(filter={"run": tag, "year": {"$lt": "2020"}})
        self.assertEqual((deleted.deleted, deleted.has_more), (1, False))
        deleted = self.client.delete_documents(document_ids=[undated, str(uuid.uuid4())])
        self.assertEqual((deleted.deleted, deleted.has_more), (1, False))
        left = self.client.query("gannets", filter={"run": tag})
        self.assertEqual([hit.document_id for hit in left.results], [recent])
        with self.assertRaises(NotFoundError):
            self.client.get_document(old)


class UsageTest(unittest.TestCase):
    def test_org_names_the_keys_organisation(self) -> None:
        client = live_client()
        org = client.org()
        self.assertEqual(org["org_id"], client.usage().org_id)
        self.assertTrue(org["name"])
        self.assertGreater(org["rate_limit_rpm"], 0)
        self.assertIn("query", org["key"]["scopes"])

    def test_usage_counts_todays_queries(self) -> None:
        client = live_client()
        before = client.usage()
        client.query("usage " + run_tag())
        after = client.usage(by_partition=True)
        self.assertEqual(after.period_days, 30)
        self.assertEqual(len(after.daily), 30)
        self.assertEqual(after.daily[0].date, time.strftime("%Y-%m-%d", time.gmtime()))
        self.assertGreater(after.rate_limit_rpm, 0)
        # Other tests may query meanwhile; ours counts at least once.
        self.assertGreaterEqual(after.total_queries, before.total_queries + 1)
        self.assertGreaterEqual(after.daily[0].count, before.daily[0].count + 1)
        self.assertEqual(sum(p.total_queries for p in after.partitions), after.total_queries)

    def test_usage_of_one_partition(self) -> None:
        client = live_client()
        name = "usage-" + run_tag().lower()[:40]
        client.query("usage " + run_tag(), partitions=[name])
        report = client.usage(partition=name)
        self.assertEqual(report.total_queries, 1)
        self.assertEqual([(p.partition, p.total_queries) for p in report.partitions], [(name, 1)])


class IdempotencyTest(unittest.TestCase):
    def test_the_same_key_replays_the_same_ids(self) -> None:
        client = live_client()
        key = "py-test-" + uuid.uuid4().hex
        text = ["idempotent " + run_tag()]
        first = client.ingest_text(text, idempotency_key=key)
        second = client.ingest_text(text, idempotency_key=key)
        self.assertEqual(second.document_ids, first.document_ids)
        self.assertFalse(first.replayed)
        self.assertTrue(second.replayed)

        with self.assertRaises(DocindexError) as caught:
            client.ingest_text(["something else"], idempotency_key=key)
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.code, "idempotency_key_reused")

        # Without a key of the caller's, every call gets its own: two documents, not one.
        third = client.ingest_text(text)
        fourth = client.ingest_text(text)
        self.assertNotEqual(third.document_ids, fourth.document_ids)


class AuthenticationTest(unittest.TestCase):
    def test_a_bad_api_key_is_a_401(self) -> None:
        good = live_client()
        client = Client(base_url=good.base_url, api_key="dix_not_a_real_key")
        with self.assertRaises(UnauthorizedError) as caught:
            client.usage()
        self.assertEqual(caught.exception.status, 401)
        self.assertEqual(caught.exception.code, "unauthorized")
        self.assertTrue((caught.exception.request_id or "").startswith("req_"))


class RateLimitTest(unittest.TestCase):
    """Needs a second key whose organisation allows a few requests a minute
    (DOCINDEX_RATE_LIMITED_API_KEY; the CI script creates one)."""

    def test_a_spent_rate_limit_is_a_429_with_retry_after(self) -> None:
        base = live_client()
        key = os.environ.get("DOCINDEX_RATE_LIMITED_API_KEY")
        if not key:
            if os.environ.get("REQUIRE_PYTHON_CLIENT_TESTS") == "1":
                self.fail("DOCINDEX_RATE_LIMITED_API_KEY is not set (REQUIRE_PYTHON_CLIENT_TESTS=1)")
            self.skipTest("DOCINDEX_RATE_LIMITED_API_KEY is not set: no rate-limited organisation")
        client = Client(base_url=base.base_url, api_key=key, max_retries=0)
        error: Optional[RateLimitedError] = None
        # A few requests a minute, in fixed windows: a run crossing a window's edge gets a fresh
        # allowance once, and an earlier run may have spent this window's already.
        for _ in range(MAX_LIMITED_REQUESTS):
            try:
                client.usage()
            except RateLimitedError as caught:
                error = caught
                break
        self.assertIsNotNone(error, "no 429 after {} requests".format(MAX_LIMITED_REQUESTS))
        assert error is not None
        self.assertEqual(error.status, 429)
        self.assertEqual(error.code, "rate_limited")
        self.assertIsNotNone(error.retry_after_seconds)
        self.assertTrue(0 < (error.retry_after_seconds or 0) <= 60, error.retry_after_seconds)

        # A wait longer than the client accepts fails at once instead of sleeping.
        patient = Client(base_url=base.base_url, api_key=key, max_retries=3, max_retry_delay=0.2)
        started = time.monotonic()
        with self.assertRaises(RateLimitedError):
            patient.usage()
        self.assertLess(time.monotonic() - started, 2)


if __name__ == "__main__":
    unittest.main()


class WebhooksTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def test_create_list_get_deliveries_delete(self) -> None:
        # Subscribed only to an event nothing here emits, so nothing is ever sent to the address.
        hook = self.client.create_webhook(
            "https://hooks.example.com/" + run_tag(), events=["document.vectors_ready"], description="py"
        )
        self.assertTrue(hook["secret"].startswith("whsec_"))
        self.assertEqual(hook["events"], ["document.vectors_ready"])
        listed = [h for h in self.client.list_webhooks() if h["id"] == hook["id"]]
        self.assertEqual(len(listed), 1)
        self.assertNotIn("secret", listed[0])
        self.assertTrue(self.client.get_webhook(hook["id"])["enabled"])
        self.assertEqual(self.client.list_webhook_deliveries(hook["id"], limit=5), {"deliveries": [], "pending": 0})
        with self.assertRaises(InvalidRequestError):
            self.client.create_webhook("http://10.0.0.1/hook")
        self.client.delete_webhook(hook["id"])
        with self.assertRaises(NotFoundError):
            self.client.get_webhook(hook["id"])


class EvaluationsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = live_client()

    def test_an_evaluation_scores_judged_queries_and_is_listed(self) -> None:
        tag = run_tag()
        external_id = "capybara-" + tag
        ack = self.client.ingest_text([{"text": "Capybaras graze on river grasses at dusk.", "external_id": external_id}])
        self.client.wait_ready(ack.document_ids, timeout=WAIT_SECONDS, poll_interval=0.1)
        evaluation_id = self.client.create_evaluation(
            [
                {"query": "capybaras graze river grasses", "relevant": [{"external_id": external_id, "grade": 2}]},
                {"query": "capybaras", "relevant": [{"external_id": "missing-" + tag}]},
            ],
            runs=[{"mode": "keyword"}],
            top_k=5,
            name=tag,
        )
        evaluation = self.client.wait_for_evaluation(evaluation_id, timeout=WAIT_SECONDS, poll_interval=0.1)
        self.assertEqual(evaluation["status"], "done")
        self.assertEqual(evaluation["queries_evaluated"], 1)
        run = evaluation["runs"][0]
        self.assertEqual((run["mode"], run["ndcg_at_10"], run["recall_at_k"], run["mrr_at_10"]), ("keyword", 1, 1, 1))
        self.assertEqual(run["queries"][0]["ranks"][0]["rank"], 1)
        self.assertEqual(evaluation["queries"][1]["unknown"], [{"external_id": "missing-" + tag}])
        listed = self.client.list_evaluations(limit=100)
        self.assertIn(evaluation_id, [e["id"] for e in listed["evaluations"]])
        with self.assertRaises(NotFoundError):
            self.client.get_evaluation("eval_" + tag)
        with self.assertRaises(InvalidRequestError):
            self.client.create_evaluation([{"query": "x", "relevant": []}])
