"""The file formats the server accepts: extension → the media type an upload is labelled with.

A copy of the extensions and first media types in the server's registry
(``src/domain/formats.ts``); ``tests/test_formats.py`` fails when the two differ.
"""

import mimetypes
import os
from typing import Dict

#: The extensions clients offer, in the registry's order, with the media type each is sent as.
UPLOAD_CONTENT_TYPES: Dict[str, str] = {
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".csv": "text/csv",
    ".tsv": "text/csv",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".epub": "application/epub+zip",
    ".rtf": "application/rtf",
    ".eml": "message/rfc822",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tiff": "image/tiff",
    ".tif": "image/tiff",
}


def content_type_for(filename: str) -> str:
    """The media type to label an upload of ``filename`` with, from its extension.

    Supported formats come from the registry copy (``mimetypes`` does not know ``.md`` on every
    system); anything else falls back to ``mimetypes``, then ``application/octet-stream``, and
    the server decides (it refuses unsupported formats with a 415).
    """
    extension = os.path.splitext(filename)[1].lower()
    known = UPLOAD_CONTENT_TYPES.get(extension)
    if known is not None:
        return known
    guessed, _ = mimetypes.guess_type(filename, strict=False)
    return guessed or "application/octet-stream"
