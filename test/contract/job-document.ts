// The document row ingest would have committed for a job. In the table-backed queue that row is
// the job, so queue tests create it before enqueueing.
import type { JobRef, NewDocument, NewVersion } from '../../src/domain/types.js';

/** What makes a document a URL ingest whose download has not happened yet (the download lane's). */
export const URL_INPUT: Pick<NewDocument, 'text' | 'fetchUrl' | 'source'> = {
  text: null,
  fetchUrl: 'https://example.com/a.pdf?sig=secret',
  source: { type: 'url', filename: null, url: 'https://example.com/a.pdf', content_type: null, bytes: null },
};

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
    traceparent: ref.traceparent ?? null,
  };
}

/** A job document for a URL ingest: its job is the download. */
export function urlDocument(ref: JobRef): NewDocument {
  return { ...jobDocument(ref), ...URL_INPUT };
}

/** A new text version of a job document, as a PUT would start it. */
export function jobVersion(): NewVersion {
  return {
    source: { type: 'text', filename: null, url: null, content_type: 'text/plain', bytes: null },
    chunkSize: 512,
    chunkOverlap: 64,
    metadata: null,
    text: 'new job input',
    blobKey: null,
    fetchUrl: null,
    at: new Date(),
  };
}
