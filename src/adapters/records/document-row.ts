// The documents table's record columns and their mapping to a DocumentRecord, the same for every
// SQL backend. Each driver returns numbers, timestamps and JSON in its own types; the backend
// says how to read them.
import type {
  DocumentRecord,
  DocumentStatus,
  FailureCode,
  Metadata,
  SourceType,
} from '../../domain/types.js';

export const RECORD_COLUMNS = `id, org_id, status, source_type, filename, source_url, content_type, bytes, metadata,
  chunk_size, chunk_overlap, tokenizer, chunk_count, token_count, content_sha256, ocr_pages, error_code,
  error_message, attempts, created_at, updated_at`;

/** A row of RECORD_COLUMNS: `N` a driver's big numbers, `T` its timestamps, `M` its JSON. */
export interface DocumentRow<N, T, M> {
  id: string;
  org_id: string;
  status: DocumentStatus;
  source_type: SourceType;
  filename: string | null;
  source_url: string | null;
  content_type: string | null;
  bytes: N | null;
  metadata: M;
  chunk_size: number;
  chunk_overlap: number;
  tokenizer: string;
  chunk_count: number | null;
  token_count: N | null;
  content_sha256: string | null;
  ocr_pages: number | null;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  created_at: T;
  updated_at: T;
}

export interface RowReaders<N, T, M> {
  number(value: N): number;
  date(value: T): Date;
  metadata(value: M): Metadata;
}

export function toDocumentRecord<N, T, M>(
  row: DocumentRow<N, T, M>,
  read: RowReaders<N, T, M>,
): DocumentRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    status: row.status,
    source: {
      type: row.source_type,
      filename: row.filename,
      url: row.source_url,
      content_type: row.content_type,
      bytes: row.bytes === null ? null : read.number(row.bytes),
    },
    metadata: read.metadata(row.metadata),
    chunkSize: row.chunk_size,
    chunkOverlap: row.chunk_overlap,
    tokenizer: row.tokenizer,
    chunkCount: row.chunk_count,
    tokenCount: row.token_count === null ? null : read.number(row.token_count),
    contentSha256: row.content_sha256,
    ocrPages: row.ocr_pages,
    error:
      row.error_code === null
        ? null
        : { code: row.error_code as FailureCode, message: row.error_message ?? '' },
    attempts: row.attempts,
    createdAt: read.date(row.created_at),
    updatedAt: read.date(row.updated_at),
  };
}
