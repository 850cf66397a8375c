"""The API's answers as typed dataclasses, parsed from the JSON the server returns.

Each ``from_json`` reads the fields it knows and ignores the rest, so a newer server that adds
fields does not break an older client. Field names are the API's own (snake_case already).
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

# The four processing states of a document: queued → processing → ready | failed.
DocumentStatus = str
Metadata = Dict[str, str]
#: A metadata filter, sent as JSON: ``{"key": "v"}``, ``{"key": ["a", "b"]}``, operator objects
#: ``{"key": {"$gte": "2020", "$lt": "2022"}}`` ($eq $ne $gt $gte $lt $lte $in $nin $exists) and
#: ``{"$and": [...]}``, ``{"$or": [...]}``, ``{"$not": {...}}``. The server checks it and answers a
#: 400 whose field error points at the part it refuses.
QueryFilter = Mapping[str, Any]

DONE_STATUSES = ("ready", "failed")


def _opt_str(value: Any) -> Optional[str]:
    return None if value is None else str(value)


def _opt_int(value: Any) -> Optional[int]:
    return None if value is None else int(value)


def _opt_float(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def _metadata(value: Any) -> Metadata:
    if not isinstance(value, dict):
        return {}
    return {str(key): str(item) for key, item in value.items()}


@dataclass(frozen=True)
class TextDocument:
    """One document of a JSON text ingest (``POST /v1/ingest``)."""

    text: str
    metadata: Metadata = field(default_factory=dict)
    #: Your key for the document: sent again, it makes a new version of that document.
    external_id: Optional[str] = None
    #: The text's language (ISO 639-1); told from the text when None.
    language: Optional[str] = None
    #: Its partition; the request's ``partition`` (else ``default``) when None.
    partition: Optional[str] = None
    #: Its access list: the principals that may see it (``group:eng``, ``user:42``); none when None.
    access: Optional[Sequence[str]] = None

    def to_json(self) -> Dict[str, Any]:
        """The request body's form of this document."""
        body: Dict[str, Any] = {"text": self.text}
        if self.partition is not None:
            body["partition"] = self.partition
        if self.access is not None:
            body["access"] = list(self.access)
        if self.metadata:
            body["metadata"] = dict(self.metadata)
        if self.external_id is not None:
            body["external_id"] = self.external_id
        if self.language is not None:
            body["language"] = self.language
        return body


@dataclass(frozen=True)
class VersionAck:
    """The 202 of :meth:`Client.replace_content` and :meth:`Client.reprocess_document`."""

    status: str
    org_id: str
    document_id: str
    #: The new version: ``pending_version`` while the current one answers, then ``version``.
    version: int
    replayed: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], replayed: bool = False) -> "VersionAck":
        """Parses the acknowledgement; ``replayed`` comes from the Idempotent-Replayed header."""
        return cls(
            status=str(data.get("status", "")),
            org_id=str(data.get("org_id", "")),
            document_id=str(data.get("document_id", "")),
            version=int(data.get("version", 0)),
            replayed=replayed,
        )


@dataclass(frozen=True)
class IngestAck:
    """The 202 answer of every ingest operation."""

    status: str
    org_id: str
    queued: int
    document_ids: List[str]
    #: True when the server replayed the first answer to this Idempotency-Key.
    replayed: bool = False

    @classmethod
    def from_json(cls, data: Mapping[str, Any], replayed: bool = False) -> "IngestAck":
        """Parses the acknowledgement; ``replayed`` comes from the Idempotent-Replayed header."""
        return cls(
            status=str(data.get("status", "")),
            org_id=str(data.get("org_id", "")),
            queued=int(data.get("queued", 0)),
            document_ids=[str(item) for item in data.get("document_ids", [])],
            replayed=replayed,
        )


@dataclass(frozen=True)
class DocumentSource:
    """Where a document came from: ``text``, ``file`` or ``url``."""

    type: str
    filename: Optional[str] = None
    #: The URL without its query string.
    url: Optional[str] = None
    content_type: Optional[str] = None
    bytes: Optional[int] = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DocumentSource":
        """Parses a document's ``source`` object."""
        return cls(
            type=str(data.get("type", "")),
            filename=_opt_str(data.get("filename")),
            url=_opt_str(data.get("url")),
            content_type=_opt_str(data.get("content_type")),
            bytes=_opt_int(data.get("bytes")),
        )


@dataclass(frozen=True)
class DocumentError:
    """Why a document ended ``failed`` (``url_unreachable``, ``corrupt``, …)."""

    code: str
    message: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DocumentError":
        """Parses a document's ``error`` object."""
        return cls(code=str(data.get("code", "")), message=str(data.get("message", "")))


@dataclass(frozen=True)
class PendingVersion:
    """A newer version on its way while the current one answers (``failed``: it could not be
    indexed, and the current one stays)."""

    version: int
    status: str
    error: Optional["DocumentError"]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PendingVersion":
        """Parses a document's ``pending_version`` object."""
        error = data.get("error")
        return cls(
            version=int(data.get("version", 0)),
            status=str(data.get("status", "")),
            error=DocumentError.from_json(error) if isinstance(error, dict) else None,
        )


@dataclass(frozen=True)
class Document:
    """A document's status record (``GET /v1/documents/{id}``)."""

    id: str
    org_id: str
    status: DocumentStatus
    source: DocumentSource
    metadata: Metadata
    chunk_size: int
    chunk_overlap: int
    tokenizer: str
    chunk_count: Optional[int]
    token_count: Optional[int]
    #: SHA-256 of the extracted text, once ready.
    content_sha256: Optional[str]
    error: Optional[DocumentError]
    attempts: int
    #: ISO 8601 timestamps, as the server sent them.
    created_at: str
    updated_at: str
    #: Pages whose text OCR recognised (an image counts as one), once ready; 0 for a PDF whose
    #: every page had a text layer; None for formats that never need OCR and older servers.
    ocr_pages: Optional[int] = None
    #: The language (ISO 639-1) the document's words were analysed in, once indexed; None before,
    #: without stemming (SEARCH_LANGUAGE=none) and from older servers.
    language: Optional[str] = None
    #: The vector stage: ``{"status": "pending"|"ready"|"failed"|"disabled", "model", "error"}``.
    vectors: Optional[Mapping[str, Any]] = None
    #: Your key for the document, if you gave one.
    external_id: Optional[str] = None
    #: The version ``status``, the chunks and the read-back routes describe.
    version: int = 1
    pending_version: Optional[PendingVersion] = None
    #: The partition of the organisation the document belongs to, fixed for its life.
    partition: str = "default"
    #: Its access list (the principals that may see it); None: anyone who may see its partition.
    access: Optional[List[str]] = None

    @property
    def done(self) -> bool:
        """True once the document is ``ready`` or ``failed``: it will not change by itself."""
        return self.status in DONE_STATUSES

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Document":
        """Parses a status record."""
        error = data.get("error")
        return cls(
            id=str(data.get("id", "")),
            org_id=str(data.get("org_id", "")),
            status=str(data.get("status", "")),
            source=DocumentSource.from_json(data.get("source") or {}),
            metadata=_metadata(data.get("metadata")),
            chunk_size=int(data.get("chunk_size", 0)),
            chunk_overlap=int(data.get("chunk_overlap", 0)),
            tokenizer=str(data.get("tokenizer", "")),
            chunk_count=_opt_int(data.get("chunk_count")),
            token_count=_opt_int(data.get("token_count")),
            content_sha256=_opt_str(data.get("content_sha256")),
            error=DocumentError.from_json(error) if isinstance(error, dict) else None,
            attempts=int(data.get("attempts", 0)),
            created_at=str(data.get("created_at", "")),
            updated_at=str(data.get("updated_at", "")),
            ocr_pages=_opt_int(data.get("ocr_pages")),
            language=_opt_str(data.get("language")),
            vectors=data.get("vectors") if isinstance(data.get("vectors"), dict) else None,
            external_id=_opt_str(data.get("external_id")),
            version=int(data.get("version", 1)),
            partition=str(data.get("partition") or "default"),
            access=(
                [str(p) for p in data["access"]] if isinstance(data.get("access"), list) else None
            ),
            pending_version=(
                PendingVersion.from_json(data["pending_version"])
                if isinstance(data.get("pending_version"), dict)
                else None
            ),
        )


@dataclass(frozen=True)
class DocumentPage:
    """One page of ``GET /v1/documents``; ``next_cursor`` is None on the last page."""

    documents: List[Document]
    next_cursor: Optional[str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DocumentPage":
        """Parses a page of documents."""
        return cls(
            documents=[Document.from_json(item) for item in data.get("documents", [])],
            next_cursor=_opt_str(data.get("next_cursor")),
        )


@dataclass(frozen=True)
class DeleteResult:
    """``POST /v1/documents/delete``: documents deleted, and whether more still match."""

    deleted: int
    has_more: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DeleteResult":
        """Parses a delete answer."""
        return cls(deleted=int(data.get("deleted", 0)), has_more=bool(data.get("has_more", False)))


@dataclass(frozen=True)
class Chunk:
    """One chunk a ready document was indexed as; page numbers only for paged formats (PDF)."""

    index: int
    text: str
    token_count: int
    page_start: Optional[int] = None
    page_end: Optional[int] = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Chunk":
        """Parses one chunk of ``GET /v1/documents/{id}/chunks``."""
        return cls(
            index=int(data["index"]),
            text=str(data["text"]),
            token_count=int(data["token_count"]),
            page_start=_opt_int(data.get("page_start")),
            page_end=_opt_int(data.get("page_end")),
        )


@dataclass(frozen=True)
class ChunkPage:
    """One page of ``GET /v1/documents/{id}/chunks``; ``next_cursor`` is None on the last page."""

    chunks: List[Chunk]
    next_cursor: Optional[str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ChunkPage":
        """Parses a page of chunks."""
        return cls(
            chunks=[Chunk.from_json(item) for item in data.get("chunks", [])],
            next_cursor=_opt_str(data.get("next_cursor")),
        )


@dataclass(frozen=True)
class DocumentFile:
    """A document's original file (``GET /v1/documents/{id}/file``)."""

    data: bytes
    content_type: str
    filename: Optional[str]


@dataclass(frozen=True)
class QueryResult:
    """One ranked chunk of a query's answer; page numbers only for paged formats (PDF).

    ``score`` is the one of the mode used (the keyword score, cosine similarity, or the fused
    reciprocal-rank score in hybrid mode, or the reranker's relevance score when reranked);
    ``keyword_score`` (BM25 as a share, 0–1, of the most the query could score) and
    ``semantic_score`` (cosine) are None when the chunk was not in that list, ``rerank_score``
    when the results were not reranked.
    """

    document_id: str
    chunk_index: int
    text: str
    score: float
    metadata: Metadata
    page_start: Optional[int] = None
    page_end: Optional[int] = None
    keyword_score: Optional[float] = None
    semantic_score: Optional[float] = None
    rerank_score: Optional[float] = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "QueryResult":
        """Parses one result."""
        scores = data.get("scores")
        if not isinstance(scores, dict):
            scores = {}
        return cls(
            document_id=str(data.get("document_id", "")),
            chunk_index=int(data.get("chunk_index", 0)),
            text=str(data.get("text", "")),
            score=float(data.get("score", 0.0)),
            metadata=_metadata(data.get("metadata")),
            page_start=_opt_int(data.get("page_start")),
            page_end=_opt_int(data.get("page_end")),
            keyword_score=_opt_float(scores.get("keyword")),
            semantic_score=_opt_float(scores.get("semantic")),
            rerank_score=_opt_float(scores.get("rerank")),
        )


@dataclass(frozen=True)
class QueryResponse:
    """The answer of ``POST /v1/query``: the best chunks, best first.

    ``mode`` is the mode used; ``degraded`` is True when a provider was down and the answer was
    made without it, and ``degraded_reasons`` says which: ``"embeddings_unavailable"`` (a hybrid
    query's keyword results alone) or ``"rerank_unavailable"`` (the first stage's order).
    """

    org_id: str
    results: List[QueryResult]
    mode: str = "keyword"
    degraded: bool = False
    degraded_reasons: List[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "QueryResponse":
        """Parses a query's answer."""
        return cls(
            org_id=str(data.get("org_id", "")),
            results=[QueryResult.from_json(item) for item in data.get("results", [])],
            mode=str(data.get("mode", "keyword")),
            degraded=bool(data.get("degraded", False)),
            degraded_reasons=[str(reason) for reason in data.get("degraded_reasons", [])],
        )


@dataclass(frozen=True)
class UsageDay:
    """Queries on one UTC day (``date`` is YYYY-MM-DD)."""

    date: str
    count: int


@dataclass(frozen=True)
class UsagePartition:
    """The window's queries that ran over ``partition``: a partition's name, ``(several)`` (two or
    more partitions) or ``(all)`` (the whole organisation)."""

    partition: str
    total_queries: int


@dataclass(frozen=True)
class UsageReport:
    """``GET /v1/usage``: queries per UTC day over 30 days (today first), by partition, and the
    rate limit. Each query is in one entry of ``partitions``, so they add up to ``total_queries``."""

    org_id: str
    period_days: int
    total_queries: int
    daily: List[UsageDay]
    rate_limit_rpm: int
    partitions: List[UsagePartition] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "UsageReport":
        """Parses a usage report."""
        return cls(
            org_id=str(data.get("org_id", "")),
            period_days=int(data.get("period_days", 0)),
            total_queries=int(data.get("total_queries", 0)),
            daily=[
                UsageDay(date=str(day.get("date", "")), count=int(day.get("count", 0)))
                for day in data.get("daily", [])
            ],
            rate_limit_rpm=int(data.get("rate_limit_rpm", 0)),
            partitions=[
                UsagePartition(
                    partition=str(entry.get("partition", "")),
                    total_queries=int(entry.get("total_queries", 0)),
                )
                for entry in data.get("partitions", [])
            ],
        )


@dataclass(frozen=True)
class FieldError:
    """One validation problem: a JSON Pointer into the request and what is wrong there."""

    pointer: str
    message: str


@dataclass(frozen=True)
class WaitProgress:
    """What ``wait_for_documents`` reports after every poll."""

    total: int
    queued: int
    processing: int
    ready: int
    failed: int
    #: The latest status of every document, in the order asked.
    documents: List[Document]

    @classmethod
    def of(cls, documents: List[Document]) -> "WaitProgress":
        """Counts the documents by status."""
        counts = {"queued": 0, "processing": 0, "ready": 0, "failed": 0}
        for doc in documents:
            if doc.status in counts:
                counts[doc.status] += 1
        return cls(total=len(documents), documents=documents, **counts)
