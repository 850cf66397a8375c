"""Status records parse into Document, including what OCR did."""

import unittest

from docindex.types import Document

from .test_transport import document


class DocumentTest(unittest.TestCase):
    def test_ocr_pages_is_read_when_present_and_none_otherwise(self) -> None:
        scanned = dict(document("d1", "ready"), ocr_pages=3)
        self.assertEqual(Document.from_json(scanned).ocr_pages, 3)
        self.assertIsNone(Document.from_json(dict(document("d2", "ready"), ocr_pages=None)).ocr_pages)
        # An older server does not send the field at all.
        self.assertIsNone(Document.from_json(document("d3", "ready")).ocr_pages)


if __name__ == "__main__":
    unittest.main()
