"""Status records parse into Document, including what OCR did; query answers into QueryResponse."""

import unittest

from docindex.types import Document, QueryResponse, TextDocument

from .test_transport import document


class DocumentTest(unittest.TestCase):
    def test_ocr_pages_is_read_when_present_and_none_otherwise(self) -> None:
        scanned = dict(document("d1", "ready"), ocr_pages=3)
        self.assertEqual(Document.from_json(scanned).ocr_pages, 3)
        self.assertIsNone(Document.from_json(dict(document("d2", "ready"), ocr_pages=None)).ocr_pages)
        # An older server does not send the field at all.
        self.assertIsNone(Document.from_json(document("d3", "ready")).ocr_pages)

    def test_language_is_read_and_sent(self) -> None:
        self.assertEqual(Document.from_json(dict(document("d1", "ready"), language="de")).language, "de")
        self.assertIsNone(Document.from_json(document("d2", "ready")).language)
        self.assertEqual(TextDocument("Hallo Welt", language="de").to_json(), {"text": "Hallo Welt", "language": "de"})
        self.assertEqual(TextDocument("hello").to_json(), {"text": "hello"})


if __name__ == "__main__":
    unittest.main()


class QueryResponseTest(unittest.TestCase):
    def test_hybrid_answers_carry_the_mode_and_both_scores(self) -> None:
        answer = QueryResponse.from_json(
            {
                "org_id": "org_1",
                "mode": "hybrid",
                "degraded": True,
                "degraded_reasons": ["embeddings_unavailable", "rerank_unavailable"],
                "results": [
                    {
                        "document_id": "d",
                        "chunk_index": 2,
                        "text": "t",
                        "score": 0.0163,
                        "scores": {"keyword": 4.2, "semantic": None},
                        "metadata": {},
                        "page_start": None,
                        "page_end": None,
                    }
                ],
            }
        )
        self.assertEqual((answer.mode, answer.degraded), ("hybrid", True))
        self.assertEqual(answer.results[0].keyword_score, 4.2)
        self.assertIsNone(answer.results[0].semantic_score)
        self.assertIsNone(answer.results[0].rerank_score)
        self.assertEqual(answer.degraded_reasons, ["embeddings_unavailable", "rerank_unavailable"])

    def test_reranked_answers_carry_the_rerank_score(self) -> None:
        answer = QueryResponse.from_json(
            {
                "org_id": "org_1",
                "mode": "keyword",
                "degraded": False,
                "degraded_reasons": [],
                "results": [
                    {
                        "document_id": "d",
                        "chunk_index": 0,
                        "text": "t",
                        "score": 0.97,
                        "scores": {"keyword": 4.2, "semantic": None, "rerank": 0.97},
                        "metadata": {},
                        "page_start": None,
                        "page_end": None,
                    }
                ],
            }
        )
        self.assertEqual(answer.results[0].rerank_score, 0.97)
        self.assertEqual(answer.degraded_reasons, [])
