"""docindex: a Python client for the docindex document ingestion and search API.

    from docindex import Client, DocindexError

    client = Client(base_url="http://127.0.0.1:8080", api_key="dix_…")
    ack = client.ingest_file("handbook.pdf", metadata={"team": "hr"})
    client.wait_for_documents(ack.document_ids)
    for hit in client.query("holiday policy", top_k=5, filter={"team": "hr"}).results:
        print(hit.score, hit.document_id, hit.text[:80])

Standard library only; Python 3.9 or newer.
"""

from .client import MAX_IDS_PER_REQUEST, Client, parse_retry_after
from .errors import (
    DocindexError,
    InsufficientScopeError,
    InvalidRequestError,
    NetworkError,
    NotFoundError,
    RateLimitedError,
    ServiceUnavailableError,
    UnauthorizedError,
    WaitTimeoutError,
)
from .formats import UPLOAD_CONTENT_TYPES, content_type_for
from .types import (
    Chunk,
    ChunkPage,
    DeleteResult,
    Document,
    DocumentError,
    DocumentFile,
    DocumentPage,
    DocumentSource,
    FieldError,
    IngestAck,
    PendingVersion,
    QueryResponse,
    QueryResult,
    TextDocument,
    VersionAck,
    UsageDay,
    UsagePartition,
    UsageReport,
    WaitProgress,
)

__version__ = "0.1.0"

__all__ = [
    "MAX_IDS_PER_REQUEST",
    "UPLOAD_CONTENT_TYPES",
    "Chunk",
    "ChunkPage",
    "Client",
    "DeleteResult",
    "DocindexError",
    "Document",
    "DocumentError",
    "DocumentFile",
    "DocumentPage",
    "DocumentSource",
    "FieldError",
    "IngestAck",
    "PendingVersion",
    "InsufficientScopeError",
    "InvalidRequestError",
    "NetworkError",
    "NotFoundError",
    "QueryResponse",
    "QueryResult",
    "RateLimitedError",
    "ServiceUnavailableError",
    "TextDocument",
    "VersionAck",
    "UnauthorizedError",
    "UsageDay",
    "UsagePartition",
    "UsageReport",
    "WaitProgress",
    "WaitTimeoutError",
    "content_type_for",
    "parse_retry_after",
]
