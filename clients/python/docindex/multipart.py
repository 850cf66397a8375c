"""A multipart/form-data body that streams its file from disk instead of holding it in memory.

urllib sends any iterable body as long as the request carries a Content-Length, so the body is
an iterable that yields the form's preamble (the ``metadata`` part and the file part's headers),
then the file in chunks, then the closing boundary; its length is known beforehand from the file
size. Every iteration opens the file again (or seeks a file object back), so a retried request
sends the whole body again.
"""

import io
import os
import uuid
from typing import BinaryIO, Callable, Iterator, List, Optional, Tuple, Union

CHUNK_BYTES = 256 * 1024

FileOpener = Callable[[], BinaryIO]


class MultipartBody:
    """One form: text fields first, then a single file part."""

    def __init__(
        self,
        fields: List[Tuple[str, str]],
        file_field: str,
        filename: str,
        content_type: str,
        open_file: FileOpener,
        size: int,
        close_after: bool = True,
    ) -> None:
        """``open_file`` returns the file positioned at its first byte; ``size`` is its length."""
        self.boundary = "docindex-" + uuid.uuid4().hex
        self._open_file = open_file
        self._close_after = close_after
        self._size = size
        preamble = b"".join(
            self._part_head('name="{}"'.format(_quote(name)), None) + value.encode("utf-8") + b"\r\n"
            for name, value in fields
        )
        disposition = 'name="{}"; filename="{}"'.format(_quote(file_field), _quote(filename))
        self._preamble = preamble + self._part_head(disposition, content_type)
        self._epilogue = "\r\n--{}--\r\n".format(self.boundary).encode("ascii")

    @property
    def content_type(self) -> str:
        """The request's Content-Type header, with this body's boundary."""
        return "multipart/form-data; boundary={}".format(self.boundary)

    def __len__(self) -> int:
        return len(self._preamble) + self._size + len(self._epilogue)

    def __iter__(self) -> Iterator[bytes]:
        yield self._preamble
        file = self._open_file()
        try:
            remaining = self._size
            while remaining > 0:
                chunk = file.read(min(CHUNK_BYTES, remaining))
                if not chunk:
                    # Content-Length is already sent: a shorter body would hang or corrupt the form.
                    raise ValueError(
                        "the file shrank while it was being uploaded ({} bytes missing)".format(remaining)
                    )
                remaining -= len(chunk)
                yield chunk
        finally:
            if self._close_after:
                file.close()
        yield self._epilogue

    def _part_head(self, disposition: str, content_type: Optional[str]) -> bytes:
        lines = ["--" + self.boundary, "Content-Disposition: form-data; " + disposition]
        if content_type is not None:
            lines.append("Content-Type: " + content_type)
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def _quote(value: str) -> str:
    # What browsers do (WHATWG "multipart/form-data encoding"): the server reads the name as UTF-8.
    return value.replace("\r", "%0D").replace("\n", "%0A").replace('"', "%22")


FileSource = Union[str, "os.PathLike[str]", BinaryIO]


def file_body_source(file: FileSource) -> Tuple[FileOpener, int, bool]:
    """How to read ``file`` (a path or a seekable binary file object) from its start, and its size."""
    if isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        size = os.stat(path).st_size
        return (lambda: open(path, "rb")), size, True
    if not (hasattr(file, "read") and hasattr(file, "seek") and file.seekable()):
        raise TypeError("ingest_file takes a path or a seekable binary file object")
    start = file.tell()
    size = file.seek(0, io.SEEK_END) - start
    file.seek(start)

    def rewind() -> BinaryIO:
        file.seek(start)
        return file

    return rewind, size, False
