// The JSON shape of a document status record (README, "API overview").
import type { DocumentRecord } from '../../../domain/types.js';

export function toDocumentJson(doc: DocumentRecord) {
  return {
    id: doc.id,
    org_id: doc.orgId,
    external_id: doc.externalId,
    version: doc.version,
    pending_version: doc.pendingVersion,
    status: doc.status,
    source: doc.source,
    metadata: doc.metadata,
    chunk_size: doc.chunkSize,
    chunk_overlap: doc.chunkOverlap,
    tokenizer: doc.tokenizer,
    chunk_count: doc.chunkCount,
    token_count: doc.tokenCount,
    content_sha256: doc.contentSha256,
    error: doc.error,
    attempts: doc.attempts,
    created_at: doc.createdAt.toISOString(),
    updated_at: doc.updatedAt.toISOString(),
  };
}
