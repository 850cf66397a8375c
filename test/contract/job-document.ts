// The document row ingest would have committed for a job. In the table-backed queue that row is
// the job, so queue tests create it before enqueueing.
import type { JobRef, NewDocument } from '../../src/domain/types.js';

export function jobDocument(ref: JobRef): NewDocument {
  return {
    id: ref.documentId,
    orgId: ref.orgId,
    source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
    metadata: {},
    chunkSize: 512,
    chunkOverlap: 64,
    tokenizer: 'o200k_base',
    createdAt: new Date(),
    text: 'job input',
    blobKey: null,
    fetchUrl: null,
  };
}
