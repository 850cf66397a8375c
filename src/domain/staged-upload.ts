// An upload in the blob store, checked but not yet committed. Until a commit keeps it, its blob
// belongs to this object alone, and IngestionService.withStagedFile discards it once the request
// is over: refused, replayed under its Idempotency-Key or failed, the blob is deleted exactly
// once; kept, it is the document's and never deleted here.
import type { Readable } from 'node:stream';
import { ERRORS } from './errors.js';
import {
  type BlobStore,
  BlobTooLargeError,
  type BlobWrite,
  type DocumentPipeline,
  newBlobKey,
} from './ports.js';
import type { Metadata } from './types.js';

export class StagedUpload {
  private state: 'staged' | 'kept' | 'discarded' = 'staged';

  constructor(
    private readonly blobs: BlobStore,
    readonly blob: BlobWrite,
    readonly filename: string | null,
    readonly metadata: Metadata,
    readonly contentType: string,
  ) {}

  /** A commit took the upload: its blob is a document's from now on. */
  keep(): void {
    if (this.state === 'staged') this.state = 'kept';
  }

  /** Deletes the blob unless a commit kept it; only the first call deletes. */
  async discard(): Promise<void> {
    if (this.state !== 'staged') return;
    this.state = 'discarded';
    await this.blobs.delete(this.blob.key);
  }
}

export interface StagingDeps {
  blobs: BlobStore;
  sniffFormat: DocumentPipeline['sniffFormat'];
  maxUploadBytes: number;
}

/**
 * Streams an upload into the blob store (≤ maxUploadBytes) and checks its format from the bytes.
 * `readMetadata` runs after the file (multipart parts may come in any order). A refusal (413, 415,
 * or what readMetadata throws) leaves no blob behind.
 */
export async function stageUpload(
  deps: StagingDeps,
  upload: { stream: Readable; filename: string | null },
  readMetadata: () => Promise<Metadata>,
): Promise<StagedUpload> {
  const { blobs, maxUploadBytes } = deps;
  let blob: BlobWrite;
  try {
    blob = await blobs.put(newBlobKey(), upload.stream, { maxBytes: maxUploadBytes });
  } catch (error) {
    if (error instanceof BlobTooLargeError) {
      throw ERRORS.payloadTooLarge(
        `The file is larger than the ${maxUploadBytes.toLocaleString('en-US')}-byte limit.`,
      );
    }
    throw error;
  }
  try {
    const metadata = await readMetadata();
    if (blob.bytes === 0) throw ERRORS.unsupportedMediaType('The file is empty.');
    const sniffed = await blobs.withLocalFile(blob.key, (path) =>
      deps.sniffFormat({ path, filename: upload.filename }),
    );
    if (!sniffed.ok) throw ERRORS.unsupportedMediaType(sniffed.detail);
    return new StagedUpload(blobs, blob, upload.filename, metadata, sniffed.contentType);
  } catch (error) {
    // Never staged: the blob just written is no one's.
    await blobs.delete(blob.key);
    throw error;
  }
}
