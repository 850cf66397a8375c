"""The client's upload content types agree with the server's format registry.

docindex/formats.py copies the extensions and first media types of src/domain/formats.ts; this
test reads that file when the client is inside a docindex checkout and fails when they differ.
"""

import os
import re
import unittest
from typing import Dict, List

from docindex import UPLOAD_CONTENT_TYPES, content_type_for

from .support import REPO_ROOT

REGISTRY = os.path.join(REPO_ROOT, "src", "domain", "formats.ts")


def _strings(listing: str) -> List[str]:
    return re.findall(r"'([^']*)'", listing)


def registry_content_types(source: str) -> Dict[str, str]:
    """Extension → first media type, for every advertised extension, in registry order."""
    media = [_strings(match) for match in re.findall(r"\bmediaTypes: \[([^\]]*)\]", source)]
    extensions = [_strings(match) for match in re.findall(r"\bextensions: \[([^\]]*)\]", source)]
    if not media or len(media) != len(extensions):
        raise AssertionError("could not read the format registry's mediaTypes and extensions")
    return {ext: types[0] for types, exts in zip(media, extensions) for ext in exts}


class FormatsTest(unittest.TestCase):
    def test_upload_content_types_match_the_server_registry(self) -> None:
        if not os.path.exists(REGISTRY):
            self.skipTest("not in a docindex checkout: {} is missing".format(REGISTRY))
        with open(REGISTRY, encoding="utf-8") as source:
            expected = registry_content_types(source.read())
        self.assertEqual(list(UPLOAD_CONTENT_TYPES.items()), list(expected.items()))

    def test_unknown_extensions_fall_back(self) -> None:
        self.assertEqual(content_type_for("REPORT.PDF"), "application/pdf")
        self.assertEqual(content_type_for("archive.unknownext"), "application/octet-stream")
