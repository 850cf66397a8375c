// The JSON shape of a document status record (docs/API.md, "Routes").
import { displayFilename } from '../../../domain/text.js';
import type { DocumentRecord } from '../../../domain/types.js';
import type { VectorsStatus } from '../../../domain/vector-status.js';
import type { AppDeps } from '../../deps.js';

const DISABLED: VectorsStatus = { status: 'disabled', model: null, error: null };

/** Status records with their `vectors` part, for one document or a page of them. */
export async function documentsJson(deps: Pick<AppDeps, 'vectorStatus'>, docs: readonly DocumentRecord[]) {
  const vectors = deps.vectorStatus
    ? await deps.vectorStatus.statusOf(docs)
    : new Map<string, VectorsStatus>();
  return docs.map((doc) => toDocumentJson(doc, vectors.get(doc.id) ?? DISABLED));
}

export async function documentJson(deps: Pick<AppDeps, 'vectorStatus'>, doc: DocumentRecord) {
  return (await documentsJson(deps, [doc]))[0]!;
}

export function toDocumentJson(doc: DocumentRecord, vectors: VectorsStatus = DISABLED) {
  return {
    id: doc.id,
    org_id: doc.orgId,
    external_id: doc.externalId,
    partition: doc.partition,
    access: doc.access,
    version: doc.version,
    pending_version: doc.pendingVersion,
    status: doc.status,
    // Names stored before invisible characters were removed at ingest are shown without them too.
    source: { ...doc.source, filename: displayFilename(doc.source.filename) },
    metadata: doc.metadata,
    chunk_size: doc.chunkSize,
    chunk_overlap: doc.chunkOverlap,
    tokenizer: doc.tokenizer,
    chunk_count: doc.chunkCount,
    token_count: doc.tokenCount,
    content_sha256: doc.contentSha256,
    ocr_pages: doc.ocrPages,
    language: doc.language,
    error: doc.error,
    attempts: doc.attempts,
    vectors,
    created_at: doc.createdAt.toISOString(),
    updated_at: doc.updatedAt.toISOString(),
  };
}
