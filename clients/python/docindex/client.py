"""Client: a typed client for every docindex endpoint, on the standard library only.

It mirrors the TypeScript client (``src/client/client.ts``): answers 429 and 503 are retried
after the wait the server asks for (Retry-After, bounded); every ingest sends an Idempotency-Key
(the same key on that call's retries, so a retried ingest never queues a document twice); reads,
and ingests carrying a key, are also retried after a network failure; problem+json answers become
:class:`~docindex.errors.DocindexError`. Uploads stream from disk.
"""

import http.client
import json
import os
import random
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from email.utils import parsedate_to_datetime
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from .errors import DocindexError, NetworkError, NotFoundError, WaitTimeoutError, error_from_response
from .formats import content_type_for
from .multipart import FileSource, MultipartBody, file_body_source
from .types import (
    ChunkPage,
    DeleteResult,
    Document,
    DocumentFile,
    DocumentPage,
    IngestAck,
    Metadata,
    QueryFilter,
    QueryResponse,
    TextDocument,
    UsageReport,
    VersionAck,
    WaitProgress,
)

__all__ = ["Client", "MAX_IDS_PER_REQUEST"]

#: Most ids one batch-status request may carry (the API's limit).
MAX_IDS_PER_REQUEST = 100
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_DELAY = 60.0
DEFAULT_TIMEOUT = 60.0
MAX_POLL_INTERVAL = 2.0

TextInput = Union[str, TextDocument, Mapping[str, Any]]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """The API never redirects; following one would hand the API key to wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        return None


class _Answer:
    """A response that arrived: its status, headers and whole body."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str], body: bytes) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body


class Client:
    """A docindex API client.

    ::

        client = Client(base_url="http://127.0.0.1:8080", api_key="dix_…")
        ack = client.ingest_text(["Salmon swim upstream."])
        client.wait_for_documents(ack.document_ids)
        client.query("salmon", top_k=5).results
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_retry_delay: float = DEFAULT_MAX_RETRY_DELAY,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """
        :param base_url: where the API is, e.g. ``http://127.0.0.1:8080`` (without ``/v1``).
        :param api_key: an API key (``dix_…``).
        :param max_retries: retries after a 429 or 503 (and after network errors on safe
            requests); 3 by default.
        :param max_retry_delay: the longest wait, in seconds, the client accepts before a retry;
            a longer Retry-After fails at once. 60 by default.
        :param timeout: seconds a connection may stay silent before the request fails.
        """
        if not api_key:
            raise ValueError("Client needs an api_key")
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError("base_url must be an http(s) URL, got {!r}".format(base_url))
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.max_retries = max_retries
        self.max_retry_delay = max_retry_delay
        self.timeout = timeout
        self._opener = urllib.request.build_opener(_NoRedirects())

    def __repr__(self) -> str:
        # Never the key.
        return "Client(base_url={!r})".format(self.base_url)

    # Ingest -------------------------------------------------------------------------------------

    def ingest_text(
        self,
        documents: Sequence[TextInput],
        *,
        chunk_size: Optional[int] = None,
        chunk_overlap: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        partition: Optional[str] = None,
        access: Optional[Sequence[str]] = None,
    ) -> IngestAck:
        """Queues up to 50 text documents (``POST /v1/ingest``).

        Each document is a string, a :class:`TextDocument`, or a ``{"text", "metadata"}`` dict.
        ``chunk_size`` is 128–4096 tokens (server default 512), ``chunk_overlap`` 0–512 and below
        ``chunk_size`` (default 64). ``idempotency_key`` defaults to a random UUID. ``partition``
        is the partition of every document that names none (server default ``default``);
        ``access`` the access list of every document that gives none of its own (the principals
        that may see it; server default: none).
        """
        entries = [_text_document(doc) for doc in documents]
        if access is not None:
            entries = [entry if "access" in entry else dict(entry, access=list(access)) for entry in entries]
        body: Dict[str, Any] = {"documents": entries}
        if partition is not None:
            body["partition"] = partition
        body.update(_chunk_fields(chunk_size, chunk_overlap))
        answer = self._call(
            "POST", "/v1/ingest", json_body=body, idempotency_key=idempotency_key or _new_key()
        )
        return _ack(answer)

    def ingest_file(
        self,
        file: FileSource,
        *,
        metadata: Optional[Metadata] = None,
        filename: Optional[str] = None,
        content_type: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        external_id: Optional[str] = None,
        chunk_size: Optional[int] = None,
        chunk_overlap: Optional[int] = None,
        partition: Optional[str] = None,
        access: Optional[Sequence[str]] = None,
    ) -> IngestAck:
        """Uploads one file (``POST /v1/ingest/file``), streamed from disk, not read into memory.

        ``file`` is a path or a seekable binary file object. ``filename`` (the name the server
        records) defaults to the path's basename; ``content_type`` to the one its extension
        names (.pdf, .docx, .txt, .md, .html/.htm, .png, .jpg/.jpeg, .tiff/.tif, and the others
        the server lists). ``external_id`` is your key for the document: a document that has it
        already gets this file as its new version. ``chunk_size`` and ``chunk_overlap`` as for
        :meth:`ingest_text`. ``partition`` is the document's partition (server default ``default``),
        ``access`` its access list (server default: none).
        """
        fields: List[Tuple[str, str]] = []
        if partition is not None:
            fields.append(("partition", partition))
        if access is not None:
            fields.append(("access", json.dumps(list(access), ensure_ascii=False)))
        if metadata is not None:
            fields.append(("metadata", json.dumps(dict(metadata), ensure_ascii=False)))
        if external_id is not None:
            fields.append(("external_id", external_id))
        for name, value in _chunk_fields(chunk_size, chunk_overlap).items():
            fields.append((name, str(value)))
        body = _file_form(file, fields, filename, content_type)
        answer = self._call(
            "POST", "/v1/ingest/file", body=body, idempotency_key=idempotency_key or _new_key()
        )
        return _ack(answer)

    def ingest_url(
        self,
        url: str,
        metadata: Optional[Metadata] = None,
        *,
        idempotency_key: Optional[str] = None,
        external_id: Optional[str] = None,
        chunk_size: Optional[int] = None,
        chunk_overlap: Optional[int] = None,
        partition: Optional[str] = None,
        access: Optional[Sequence[str]] = None,
    ) -> IngestAck:
        """Queues a public or pre-signed http(s) URL for the service to download (``POST /v1/ingest/url``).

        Non-public addresses (loopback, private networks) are refused with a 400. ``external_id``
        as for :meth:`ingest_file`; ``chunk_size`` and ``chunk_overlap`` as for :meth:`ingest_text`.
        """
        body: Dict[str, Any] = {"url": url}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if external_id is not None:
            body["external_id"] = external_id
        if partition is not None:
            body["partition"] = partition
        if access is not None:
            body["access"] = list(access)
        body.update(_chunk_fields(chunk_size, chunk_overlap))
        answer = self._call(
            "POST", "/v1/ingest/url", json_body=body, idempotency_key=idempotency_key or _new_key()
        )
        return _ack(answer)

    def replace_content(
        self,
        document_id: str,
        *,
        text: Optional[str] = None,
        url: Optional[str] = None,
        file: Optional[FileSource] = None,
        filename: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        access: Optional[Sequence[str]] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> VersionAck:
        """New content for a document, as a new version (``PUT /v1/documents/{id}/content``): one
        of ``text``, ``url`` or ``file`` (a path or a binary file object). The current version
        answers queries until the new one is ready; ``pending_version`` shows its progress.
        ``access`` replaces the document's access list at once (left out: it stays).
        """
        if sum(value is not None for value in (text, url, file)) != 1:
            raise ValueError("replace_content needs exactly one of text, url and file")
        path = _document_path(document_id) + "/content"
        key = idempotency_key or _new_key()
        query = _principals_query(principals)
        if file is not None:
            fields = [] if access is None else [("access", json.dumps(list(access), ensure_ascii=False))]
            form = _file_form(file, fields, filename, None)
            answer = self._call("PUT", path, query=query, body=form, idempotency_key=key)
        else:
            payload: Dict[str, Any] = {"text": text} if text is not None else {"url": url}
            if access is not None:
                payload["access"] = list(access)
            answer = self._call("PUT", path, query=query, json_body=payload, idempotency_key=key)
        return _version_ack(answer)

    def reprocess_document(
        self,
        document_id: str,
        *,
        chunk_size: Optional[int] = None,
        chunk_overlap: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> VersionAck:
        """Processes a document again as a new version (``POST /v1/documents/{id}/reprocess``):
        its text re-chunked or its original re-extracted, with new chunk settings if given."""
        body = _chunk_fields(chunk_size, chunk_overlap)
        answer = self._call(
            "POST",
            _document_path(document_id) + "/reprocess",
            query=_principals_query(principals),
            json_body=body,
            idempotency_key=idempotency_key or _new_key(),
        )
        return _version_ack(answer)

    # Documents ----------------------------------------------------------------------------------

    def get_document(self, document_id: str, *, principals: Optional[Sequence[str]] = None) -> Document:
        """A document's status record (``GET /v1/documents/{id}``); 404 NotFoundError if unknown.

        ``principals`` acts for those principals: only documents without an access list or
        whose list names one of them are seen (an empty list: only documents without one; server
        default: the key's principals if it is bound to some).
        """
        answer = self._call("GET", _document_path(document_id), query=_principals_query(principals))
        return Document.from_json(self._json(answer))

    def list_documents(
        self,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        status: Optional[str] = None,
        ids: Optional[Sequence[str]] = None,
        content_sha256: Optional[str] = None,
        filter: Optional[QueryFilter] = None,
        external_id: Optional[str] = None,
        partitions: Optional[Sequence[str]] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> DocumentPage:
        """One page of documents, newest first (``GET /v1/documents``).

        ``limit`` 1–100 (server default 20); ``cursor`` is a previous page's ``next_cursor``;
        ``status`` one of queued, processing, ready, failed; ``ids`` the batch status of up to
        100 documents (unknown ids are absent); ``content_sha256`` finds documents with the same
        extracted text; ``filter`` keeps documents whose metadata passes it (the language of
        :meth:`query`); ``partitions`` keeps those of these partitions (server default: every
        partition the key may see). ``principals`` acts for those principals: only documents without an access list or
        whose list names one of them are seen (an empty list: only documents without one; server
        default: the key's principals if it is bound to some).
        """
        if ids is not None and not 0 < len(ids) <= MAX_IDS_PER_REQUEST:
            raise ValueError(
                "ids must list 1 to {} documents; use get_documents for more".format(MAX_IDS_PER_REQUEST)
            )
        query: Dict[str, Optional[str]] = {
            "limit": None if limit is None else str(limit),
            "cursor": cursor,
            "status": status,
            "ids": None if ids is None else ",".join(ids),
            "content_sha256": content_sha256,
            "filter": None if filter is None else json.dumps(_filter_json(filter)),
            "external_id": external_id,
            "partitions": None if partitions is None else ",".join(partitions),
            **_principals_query(principals),
        }
        return DocumentPage.from_json(self._json(self._call("GET", "/v1/documents", query=query)))

    def get_document_by_external_id(self, external_id: str) -> Optional[Document]:
        """The document you gave this ``external_id``, or None."""
        documents = self.list_documents(external_id=external_id, limit=1).documents
        return documents[0] if documents else None

    def iterate_documents(
        self,
        *,
        status: Optional[str] = None,
        filter: Optional[QueryFilter] = None,
        page_size: int = MAX_IDS_PER_REQUEST,
    ) -> Iterator[Document]:
        """Every document (optionally of one status, or passing a filter), newest first, following
        cursors page by page.
        """
        cursor: Optional[str] = None
        while True:
            page = self.list_documents(limit=page_size, cursor=cursor, status=status, filter=filter)
            for doc in page.documents:
                yield doc
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def get_documents(self, ids: Iterable[str]) -> List[Document]:
        """The status of any number of documents, in the order asked, one request per 100 ids.

        Unknown ids (or another organisation's) are left out.
        """
        unique = list(dict.fromkeys(ids))
        found: Dict[str, Document] = {}
        for start in range(0, len(unique), MAX_IDS_PER_REQUEST):
            batch = unique[start : start + MAX_IDS_PER_REQUEST]
            for doc in self.list_documents(ids=batch, limit=MAX_IDS_PER_REQUEST).documents:
                found[doc.id] = doc
        return [found[doc_id] for doc_id in unique if doc_id in found]

    def list_chunks(
        self,
        document_id: str,
        *,
        limit: int = 20,
        cursor: Optional[str] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> ChunkPage:
        """One page of a ready document's chunks, in order (``GET /v1/documents/{id}/chunks``).

        A 409 :class:`DocindexError` (code ``not_ready``) while the document is not ready.
        """
        query = {"limit": str(limit), "cursor": cursor, **_principals_query(principals)}
        answer = self._call("GET", _document_path(document_id) + "/chunks", query=query)
        return ChunkPage.from_json(self._json(answer))

    def get_document_content(self, document_id: str, *, principals: Optional[Sequence[str]] = None) -> str:
        """A ready document's extracted text, as it was chunked and indexed
        (``GET /v1/documents/{id}/content``); a 409 ``not_ready`` before it is ready.
        """
        answer = self._call("GET", _document_path(document_id) + "/content", query=_principals_query(principals))
        return answer.body.decode("utf-8")

    def get_document_file(self, document_id: str, *, principals: Optional[Sequence[str]] = None) -> DocumentFile:
        """The file a document was uploaded as or downloaded from (``GET /v1/documents/{id}/file``):
        a 404 for a document sent as JSON text, a 409 ``not_ready`` while its URL downloads.
        """
        answer = self._call("GET", _document_path(document_id) + "/file", query=_principals_query(principals))
        return DocumentFile(
            data=answer.body,
            content_type=answer.headers.get("Content-Type") or "application/octet-stream",
            filename=_disposition_filename(answer.headers.get("Content-Disposition")),
        )

    def update_metadata(
        self,
        document_id: str,
        metadata: Mapping[str, Optional[str]],
        *,
        principals: Optional[Sequence[str]] = None,
    ) -> Document:
        """Sets metadata keys (a string) and removes them (``None``); keys not named stay
        (``PATCH /v1/documents/{id}``). Query filters see the change at once. Returns the record.
        """
        answer = self._call(
            "PATCH",
            _document_path(document_id),
            query=_principals_query(principals),
            json_body={"metadata": dict(metadata)},
        )
        return Document.from_json(self._json(answer))

    def update_access(
        self,
        document_id: str,
        access: Optional[Sequence[str]],
        *,
        principals: Optional[Sequence[str]] = None,
    ) -> Document:
        """Replaces a document's access list (``PATCH /v1/documents/{id}``; ``None`` removes it):
        from then on only requests acting for one of these principals (or for none) see it."""
        answer = self._call(
            "PATCH",
            _document_path(document_id),
            query=_principals_query(principals),
            json_body={"access": None if access is None else list(access)},
        )
        return Document.from_json(self._json(answer))

    def delete_document(self, document_id: str, *, principals: Optional[Sequence[str]] = None) -> None:
        """Deletes a document (``DELETE /v1/documents/{id}``); its chunks stop matching at once."""
        self._call("DELETE", _document_path(document_id), query=_principals_query(principals))

    def delete_documents(
        self,
        filter: Optional[QueryFilter] = None,
        document_ids: Optional[Sequence[str]] = None,
        partitions: Optional[Sequence[str]] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> DeleteResult:
        """Deletes the documents whose metadata passes ``filter`` and, when given, that are among
        ``document_ids`` (at least one of the two; an empty filter alone is refused), each with its
        chunks and stored file (``POST /v1/documents/delete``). At most 10,000 per call: while
        ``has_more`` is true, call again.
        """
        body: Dict[str, Any] = {}
        if filter is not None:
            body["filter"] = _filter_json(filter)
        if document_ids is not None:
            body["document_ids"] = list(document_ids)
        if partitions is not None:
            body["partitions"] = list(partitions)
        if principals is not None:
            body["principals"] = list(principals)
        answer = self._call("POST", "/v1/documents/delete", json_body=body)
        return DeleteResult.from_json(self._json(answer))

    def wait_for_documents(
        self,
        ids: Iterable[str],
        *,
        timeout: float = 600.0,
        poll_interval: float = 0.25,
        on_progress: Optional[Callable[[WaitProgress], None]] = None,
    ) -> List[Document]:
        """Polls batch status until every document is ``ready`` or ``failed``; returns their records.

        One request per 100 documents per poll; the interval starts at ``poll_interval`` seconds
        and grows to 2 s. Raises :class:`WaitTimeoutError` (listing the pending ids) after
        ``timeout`` seconds, and a 404 :class:`NotFoundError` if a document is unknown or is
        deleted while waiting. ``on_progress`` is called after every poll.
        """
        deadline = time.monotonic() + timeout
        unique = list(dict.fromkeys(ids))
        latest: Dict[str, Document] = {}
        interval = poll_interval
        while True:
            pending = [doc_id for doc_id in unique if doc_id not in latest or not latest[doc_id].done]
            records = self.get_documents(pending)
            for doc in records:
                latest[doc.id] = doc
            seen = {doc.id for doc in records}
            missing = [doc_id for doc_id in pending if doc_id not in seen]
            if missing:
                raise NotFoundError(
                    status=404,
                    code="not_found",
                    title="Not Found",
                    detail="No document with id {} (unknown, or deleted while waiting).".format(
                        ", ".join(missing)
                    ),
                )
            documents = [latest[doc_id] for doc_id in unique]
            if on_progress is not None:
                on_progress(WaitProgress.of(documents))
            if all(doc.done for doc in documents):
                return documents
            if time.monotonic() + interval > deadline:
                raise WaitTimeoutError([doc.id for doc in documents if not doc.done], documents, timeout)
            time.sleep(interval)
            interval = min(MAX_POLL_INTERVAL, interval * 1.5)

    #: The name the task list and docs use for ``wait_for_documents``.
    wait_ready = wait_for_documents

    # Query and usage ----------------------------------------------------------------------------

    def query(
        self,
        text: str,
        *,
        top_k: Optional[int] = None,
        filter: Optional[QueryFilter] = None,
        document_ids: Optional[Sequence[str]] = None,
        mode: Optional[str] = None,
        semantic_weight: Optional[float] = None,
        max_chunks_per_document: Optional[int] = None,
        score_threshold: Optional[float] = None,
        rerank: Optional[bool] = None,
        rerank_candidates: Optional[int] = None,
        language: Optional[str] = None,
        partitions: Optional[Sequence[str]] = None,
        principals: Optional[Sequence[str]] = None,
    ) -> QueryResponse:
        """The best-matching chunks (``POST /v1/query``); each successful query counts once
        towards usage, whatever its mode.

        ``top_k`` 1–100 (server default 10); ``filter`` keeps chunks of documents whose metadata
        passes it: ``{"team": "hr"}``, ``{"lang": ["en", "de"]}``, operator objects such as
        ``{"year": {"$gte": "2020"}}``, and ``$and``, ``$or``, ``$not``; ``document_ids`` limits
        the search. ``mode``: ``"keyword"`` (BM25), ``"semantic"`` (vectors) or ``"hybrid"``
        (both, fused by reciprocal rank; ``semantic_weight`` 0–1, default 0.5); the server's
        default is hybrid when it has an embedding provider, else keyword.
        ``max_chunks_per_document`` (1–100) caps each document; ``score_threshold`` drops results
        whose score (of the mode used, or the reranker's when reranked) is below it: in keyword
        mode a share, 0–1, of the most the query could score (0.3, say).
        ``rerank`` orders the first stage's best ``max(top_k, rerank_candidates)`` chunks
        (``rerank_candidates`` 1–200, server default 50) with the server's reranker; the server
        reranks by default when it has one, and ``rerank=True`` without one is a
        ``rerank_unavailable`` error. ``language`` (ISO 639-1) reads the query in that language
        too, beside the languages of your documents. ``partitions`` searches only documents of
        these partitions (server default: every partition the key may see). ``principals`` acts for those principals: only documents without an access list or
        whose list names one of them are seen (an empty list: only documents without one; server
        default: the key's principals if it is bound to some).
        """
        body: Dict[str, Any] = {"query": text}
        if top_k is not None:
            body["top_k"] = top_k
        if mode is not None:
            body["mode"] = mode
        if semantic_weight is not None:
            body["semantic_weight"] = semantic_weight
        if max_chunks_per_document is not None:
            body["max_chunks_per_document"] = max_chunks_per_document
        if score_threshold is not None:
            body["score_threshold"] = score_threshold
        if rerank is not None:
            body["rerank"] = rerank
        if rerank_candidates is not None:
            body["rerank_candidates"] = rerank_candidates
        if language is not None:
            body["language"] = language
        if filter is not None:
            body["filter"] = _filter_json(filter)
        if document_ids is not None:
            body["document_ids"] = list(document_ids)
        if partitions is not None:
            body["partitions"] = list(partitions)
        if principals is not None:
            body["principals"] = list(principals)
        return QueryResponse.from_json(self._json(self._call("POST", "/v1/query", json_body=body)))

    def list_partitions(self) -> List[Dict[str, Any]]:
        """The partitions the key may see (``GET /v1/partitions``): each a dict of ``name``,
        ``documents``, ``chunks``, ``bytes`` and ``status`` (``active`` or ``deleting``)."""
        return list(self._json(self._call("GET", "/v1/partitions"))["partitions"])

    def delete_partition(self, name: str) -> Dict[str, Any]:
        """Deletes every document of the partition in the background (``DELETE
        /v1/partitions/{name}``); :meth:`list_partitions` shows it as ``deleting`` until it is gone."""
        path = "/v1/partitions/" + urllib.parse.quote(name, safe="")
        return dict(self._json(self._call("DELETE", path)))

    def usage(self, partition: Optional[str] = None, by_partition: bool = False) -> UsageReport:
        """Queries per UTC day for the last 30 days (today first) and the rate limit (``GET
        /v1/usage``); with ``by_partition``, ``partitions`` breaks them down by partition; with
        ``partition``, that partition's queries only."""
        query = {"partition": partition, "by": "partition" if by_partition else None}
        answer = self._call("GET", "/v1/usage", query=query)
        return UsageReport.from_json(self._json(answer))

    def org(self) -> Dict[str, Any]:
        """The key's organisation and the key itself (``GET /v1/org``): ``org_id``, ``name``,
        ``rate_limit_rpm``, ``created_at`` and ``key`` (``key_id``, ``scopes``, ``partitions``)."""
        return dict(self._json(self._call("GET", "/v1/org")))

    # Evaluations --------------------------------------------------------------------------------
    # Answers are the API's JSON objects as dicts (docs/EVALUATIONS.md).

    def create_evaluation(
        self,
        queries: Sequence[Mapping[str, Any]],
        *,
        runs: Optional[Sequence[Mapping[str, Any]]] = None,
        top_k: Optional[int] = None,
        name: Optional[str] = None,
    ) -> str:
        """Starts an evaluation (``POST /v1/evaluations``) and returns its id. ``queries``:
        ``{"query": ..., "relevant": [{"external_id" or "document_id": ..., "grade": 1}]}``;
        ``runs``: ``{"mode", "rerank", "semantic_weight"}`` each (default: one, the server's
        defaults). Poll :meth:`get_evaluation` or call :meth:`wait_for_evaluation`."""
        body: Dict[str, Any] = {"queries": [dict(q) for q in queries]}
        if runs is not None:
            body["runs"] = [dict(r) for r in runs]
        if top_k is not None:
            body["top_k"] = top_k
        if name is not None:
            body["name"] = name
        return str(self._json(self._call("POST", "/v1/evaluations", json_body=body))["evaluation_id"])

    def get_evaluation(self, evaluation_id: str) -> Dict[str, Any]:
        """An evaluation's ``status`` and, once done, each run's nDCG@10, Recall@k, MRR@10 and
        latency with every query's figures and ranks."""
        path = "/v1/evaluations/" + urllib.parse.quote(evaluation_id, safe="")
        return dict(self._json(self._call("GET", path)))

    def list_evaluations(self, *, limit: int = 20, cursor: Optional[str] = None) -> Dict[str, Any]:
        """A page of the organisation's evaluations, newest first: ``evaluations`` and
        ``next_cursor``."""
        return dict(self._json(self._call("GET", "/v1/evaluations", query={"limit": str(limit), "cursor": cursor})))

    def wait_for_evaluation(
        self, evaluation_id: str, *, timeout: float = 3600.0, poll_interval: float = 1.0
    ) -> Dict[str, Any]:
        """Polls :meth:`get_evaluation` until it is ``done`` or ``failed`` and returns it; raises
        ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            evaluation = self.get_evaluation(evaluation_id)
            if evaluation["status"] in ("done", "failed"):
                return evaluation
            if time.monotonic() + poll_interval > deadline:
                raise TimeoutError("evaluation {} still {} after {} s".format(evaluation_id, evaluation["status"], timeout))
            time.sleep(poll_interval)

    # Sources ------------------------------------------------------------------------------------
    # Answers are the API's JSON objects as dicts (docs/SOURCES.md).

    def create_source(
        self,
        type: str,
        name: str,
        config: Mapping[str, Any],
        *,
        schedule: Optional[str] = None,
        partition: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
        access: Optional[Sequence[str]] = None,
    ) -> Dict[str, Any]:
        """Registers a source (``POST /v1/sources``) whose items become documents and stay in
        sync: ``type`` ``"s3"`` (a bucket) or ``"web"`` (a crawl: ``start_urls``, ``sitemap``,
        ``include``, ``exclude``, ``max_pages``, ``max_depth``, ``same_host``). Nothing is read
        before its first run (:meth:`sync_source` or its ``schedule``)."""
        body: Dict[str, Any] = {"type": type, "name": name, "config": dict(config)}
        if schedule is not None:
            body["schedule"] = schedule
        if partition is not None:
            body["partition"] = partition
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if access is not None:
            body["access"] = list(access)
        return dict(self._json(self._call("POST", "/v1/sources", json_body=body)))

    def list_sources(self) -> List[Dict[str, Any]]:
        """The organisation's sources, oldest first (never their credentials)."""
        return list(self._json(self._call("GET", "/v1/sources"))["sources"])

    def get_source(self, source_id: str) -> Dict[str, Any]:
        """One source; ``has_credentials`` says whether it has any."""
        return dict(self._json(self._call("GET", _source_path(source_id))))

    def update_source(
        self,
        source_id: str,
        *,
        name: Optional[str] = None,
        config: Optional[Mapping[str, Any]] = None,
        schedule: Optional[str] = None,
        metadata: Optional[Mapping[str, str]] = None,
    ) -> Dict[str, Any]:
        """Changes the fields given (``PATCH``); a new ``config`` replaces the old one (stored
        credentials left out of it are kept) and a new ``schedule`` counts from now."""
        body: Dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if config is not None:
            body["config"] = dict(config)
        if schedule is not None:
            body["schedule"] = schedule
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return dict(self._json(self._call("PATCH", _source_path(source_id), json_body=body)))

    def delete_source(self, source_id: str) -> None:
        """Deletes the source at once; its documents are deleted in the background."""
        self._call("DELETE", _source_path(source_id))

    def sync_source(self, source_id: str) -> str:
        """Queues a run and returns its ``run_id``; raises a ``DocindexError`` with code
        ``sync_in_progress`` (409) while one is queued or running."""
        return str(self._json(self._call("POST", _source_path(source_id) + "/sync"))["run_id"])

    def list_source_runs(self, source_id: str, *, limit: int = 20) -> List[Dict[str, Any]]:
        """The source's runs, newest first: ``status``, times, ``added``, ``updated``,
        ``deleted``, ``unchanged``, ``failed`` and per-item ``errors``."""
        answer = self._call("GET", _source_path(source_id) + "/runs", query={"limit": str(limit)})
        return list(self._json(answer)["runs"])

    def wait_for_source_run(
        self, source_id: str, run_id: str, *, timeout: float = 3600.0, poll_interval: float = 1.0
    ) -> Dict[str, Any]:
        """Polls :meth:`list_source_runs` until the run is ``completed`` or ``failed`` and returns
        it; raises ``TimeoutError`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            run = next((r for r in self.list_source_runs(source_id, limit=100) if r["run_id"] == run_id), None)
            if run is not None and run["status"] in ("completed", "failed"):
                return run
            if time.monotonic() + poll_interval > deadline:
                status = run["status"] if run is not None else "unknown"
                raise TimeoutError("run {} still {} after {} s".format(run_id, status, timeout))
            time.sleep(poll_interval)

    # Webhooks -----------------------------------------------------------------------------------
    # Answers are the API's JSON objects as dicts (docs/API.md, "Webhooks").

    def create_webhook(
        self,
        url: str,
        *,
        events: Optional[Sequence[str]] = None,
        description: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Registers a webhook endpoint (``POST /v1/webhooks``). The answer's ``secret``
        (``whsec_…``) is shown only now: keep it to verify ``webhook-signature``."""
        body: Dict[str, Any] = {"url": url}
        if events is not None:
            body["events"] = list(events)
        if description is not None:
            body["description"] = description
        return dict(self._json(self._call("POST", "/v1/webhooks", json_body=body)))

    def list_webhooks(self) -> List[Dict[str, Any]]:
        """The organisation's webhook endpoints, oldest first, without secrets."""
        return list(self._json(self._call("GET", "/v1/webhooks"))["webhooks"])

    def get_webhook(self, webhook_id: str) -> Dict[str, Any]:
        """One webhook endpoint; ``enabled`` is false once it was disabled."""
        return dict(self._json(self._call("GET", _webhook_path(webhook_id))))

    def delete_webhook(self, webhook_id: str) -> None:
        """Deletes the endpoint, its waiting messages and its delivery log."""
        self._call("DELETE", _webhook_path(webhook_id))

    def test_webhook(self, webhook_id: str) -> str:
        """Queues a signed ``webhook.test`` message; returns its ``webhook-id``."""
        return str(self._json(self._call("POST", _webhook_path(webhook_id) + "/test"))["message_id"])

    def list_webhook_deliveries(self, webhook_id: str, *, limit: int = 20) -> Dict[str, Any]:
        """The newest delivery attempts (``deliveries``) and how many messages wait (``pending``)."""
        answer = self._call("GET", _webhook_path(webhook_id) + "/deliveries", query={"limit": str(limit)})
        return dict(self._json(answer))

    # Transport ----------------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Optional[str]]] = None,
        json_body: Any = None,
        body: Optional[MultipartBody] = None,
        idempotency_key: Optional[str] = None,
    ) -> _Answer:
        url = self.base_url + path
        params = [(name, value) for name, value in (query or {}).items() if value is not None]
        if params:
            url += "?" + urllib.parse.urlencode(params)
        headers = {
            "Authorization": "Bearer " + self._api_key,
            "Accept": "application/json, application/problem+json",
            "User-Agent": "docindex-python/0.1",
        }
        data: Optional[Union[bytes, MultipartBody]] = None
        if json_body is not None:
            data = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif body is not None:
            data = body
            headers["Content-Type"] = body.content_type
        if data is not None:
            headers["Content-Length"] = str(len(data))
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        # Safe to resend after a lost answer: reads, merge patches (applying one twice leaves what
        # applying it once does), and writes the server recognises by key.
        resendable = method in ("GET", "PATCH") or idempotency_key is not None
        where = self.base_url + path

        attempt = 0
        while True:
            # An iterable body is what urllib streams; its stubs only name bytes.
            request = urllib.request.Request(
                url, data=data, headers=headers, method=method  # type: ignore[arg-type]
            )
            try:
                answer = self._send(request)
            except (OSError, http.client.HTTPException) as error:
                if resendable and attempt < self.max_retries:
                    time.sleep(_backoff(attempt))
                    attempt += 1
                    continue
                raise NetworkError(where, _describe(error)) from error
            if 200 <= answer.status < 300:
                return answer
            retry_after = parse_retry_after(answer.headers.get("Retry-After"))
            if answer.status in (429, 503) and attempt < self.max_retries:
                wait = _backoff(attempt) if retry_after is None else retry_after + _jitter()
                if wait <= self.max_retry_delay:
                    time.sleep(wait)
                    attempt += 1
                    continue
            raise error_from_response(answer.status, answer.reason, answer.body, answer.headers, retry_after)

    def _send(self, request: urllib.request.Request) -> _Answer:
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                return _Answer(response.status, response.reason, response.headers, response.read())
        except urllib.error.HTTPError as error:
            # An error status is an answer, not a failure to reach the server.
            try:
                body = error.read()
            except (OSError, http.client.HTTPException):
                body = b""
            finally:
                error.close()
            return _Answer(error.code, str(error.reason), error.headers, body)

    @staticmethod
    def _json(answer: _Answer) -> Any:
        try:
            return json.loads(answer.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            raise DocindexError(
                status=answer.status,
                code="invalid_response",
                title="Invalid response",
                detail="The server answered {} with a body that is not JSON.".format(answer.status),
            ) from error


def _ack(answer: _Answer) -> IngestAck:
    """An ingest's acknowledgement, marked replayed when the server says it was."""
    replayed = (answer.headers.get("Idempotent-Replayed") or "").lower() == "true"
    return IngestAck.from_json(Client._json(answer), replayed=replayed)


def _version_ack(answer: _Answer) -> VersionAck:
    """A new version's acknowledgement, marked replayed when the server says it was."""
    replayed = (answer.headers.get("Idempotent-Replayed") or "").lower() == "true"
    return VersionAck.from_json(Client._json(answer), replayed=replayed)


def _file_form(
    file: FileSource, fields: List[Tuple[str, str]], filename: Optional[str], content_type: Optional[str]
) -> MultipartBody:
    """A multipart body with ``fields`` and the file, streamed from disk."""
    if filename is None:
        name = os.fspath(file) if isinstance(file, (str, os.PathLike)) else getattr(file, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError("a file object without a name needs a filename")
        filename = os.path.basename(name)
    open_file, size, close_after = file_body_source(file)
    return MultipartBody(
        fields,
        "file",
        filename,
        content_type or content_type_for(filename),
        open_file,
        size,
        close_after,
    )


def _filter_json(value: Any) -> Any:
    """A filter as JSON data: mappings as objects, tuples and other sequences as lists; strings and
    booleans as they are. The server, not the client, decides what is valid."""
    if isinstance(value, Mapping):
        return {str(key): _filter_json(item) for key, item in value.items()}
    if isinstance(value, (str, bool, int, float)) or value is None:
        return value
    return [_filter_json(item) for item in value]


def _chunk_fields(chunk_size: Optional[int], chunk_overlap: Optional[int]) -> Dict[str, Any]:
    """The chunk settings given, as every ingest form names them."""
    fields: Dict[str, Any] = {}
    if chunk_size is not None:
        fields["chunk_size"] = chunk_size
    if chunk_overlap is not None:
        fields["chunk_overlap"] = chunk_overlap
    return fields


def _principals_query(principals: Optional[Sequence[str]]) -> Dict[str, Optional[str]]:
    """``?principals=a,b`` when principals are given (an empty list is sent as an empty value)."""
    return {} if principals is None else {"principals": ",".join(principals)}


def _text_document(doc: TextInput) -> Dict[str, Any]:
    """One entry of ``documents`` in the ingest body."""
    if isinstance(doc, str):
        return {"text": doc}
    if isinstance(doc, TextDocument):
        return doc.to_json()
    return dict(doc)


def _source_path(source_id: str) -> str:
    return "/v1/sources/" + urllib.parse.quote(source_id, safe="")


def _webhook_path(webhook_id: str) -> str:
    return "/v1/webhooks/" + urllib.parse.quote(webhook_id, safe="")


def _document_path(document_id: str) -> str:
    """The path of one document; the id is escaped, so it can never name another route."""
    return "/v1/documents/" + urllib.parse.quote(document_id, safe="")


def _new_key() -> str:
    """A fresh Idempotency-Key for one ingest call (and all its retries)."""
    return str(uuid.uuid4())


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); None if absent."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None:
        return None
    return max(0.0, at.timestamp() - time.time())


def _backoff(attempt: int) -> float:
    """Without Retry-After: 0.5 s, 1 s, 2 s… (at most 8 s) with jitter, so clients do not retry in step."""
    return min(8.0, 0.5 * 2**attempt) + _jitter()


def _jitter() -> float:
    """Up to a quarter second added to every wait, so clients do not retry in step."""
    return random.uniform(0.0, 0.25)


def _describe(error: BaseException) -> str:
    """The useful part of a network failure (``ConnectionRefusedError: …``, ``timed out``)."""
    reason = getattr(error, "reason", None)
    if isinstance(error, urllib.error.URLError) and reason is not None:
        error_reason: Any = reason
        if isinstance(error_reason, BaseException):
            return _describe(error_reason)
        return str(error_reason)
    if isinstance(error, socket.timeout):
        return "timed out"
    return "{}: {}".format(type(error).__name__, error) if str(error) else type(error).__name__


def _disposition_filename(header: Optional[str]) -> Optional[str]:
    """The file name of a Content-Disposition header: ``filename*`` (RFC 5987) or ``filename``."""
    if not header:
        return None
    extended = re.search(r"filename\*=UTF-8''([^;]+)", header, re.IGNORECASE)
    if extended:
        return urllib.parse.unquote(extended.group(1).strip(), errors="strict")
    plain = re.search(r'filename="([^"]*)"', header, re.IGNORECASE)
    return plain.group(1) if plain else None
