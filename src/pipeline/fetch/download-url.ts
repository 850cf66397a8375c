// The worker's download stage: a URL document's bytes go into the blob store through the
// SSRF-safe downloader, and its format is then checked from the bytes (with the name and type the
// server gave as hints). Every failure is a PipelineError with the code the document shows.
import path from 'node:path';
import { contentTypeOf } from '../../domain/formats.js';
import { type BlobStore, BlobTooLargeError, type DocumentPipeline, newBlobKey } from '../../domain/ports.js';
import { PipelineError } from '../errors.js';
import { detectFormat } from '../extract/index.js';
import type { AddressPolicy } from './address-policy.js';
import { downloadToSink } from './download-to-sink.js';

export interface UrlDownloaderOptions {
  policy: AddressPolicy;
  blobs: BlobStore;
  maxBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxRedirects: number;
}

/** DocumentPipeline.downloadUrl over the SSRF-safe downloader. */
export function urlDownloader(opts: UrlDownloaderOptions): DocumentPipeline['downloadUrl'] {
  const { blobs, maxBytes } = opts;
  return async (url, signal) => {
    let blobKey: string | null = null;
    let downloaded: Awaited<ReturnType<typeof downloadToSink>>;
    try {
      downloaded = await downloadToSink(
        new URL(url),
        {
          policy: opts.policy,
          maxBytes,
          connectTimeoutMs: opts.connectTimeoutMs,
          totalTimeoutMs: opts.totalTimeoutMs,
          maxRedirects: opts.maxRedirects,
          signal,
        },
        async (body) => {
          const written = await blobs.put(newBlobKey(), body.stream, { maxBytes });
          blobKey = written.key;
          return written.bytes;
        },
      );
    } catch (error) {
      if (error instanceof BlobTooLargeError) {
        throw new PipelineError('too_large', `the download is larger than ${maxBytes} bytes`);
      }
      throw error;
    }
    const key = blobKey as string | null;
    if (key === null) throw new PipelineError('url_unreachable', 'the download produced no body');
    const format = await blobs.withLocalFile(key, (file) =>
      detectFormat({
        path: file,
        filename: path.posix.basename(downloaded.finalUrl.pathname) || null,
        declaredContentType: downloaded.contentType,
      }),
    );
    if (!format.ok) {
      await blobs.delete(key);
      throw new PipelineError('unsupported_format', format.detail);
    }
    return { blobKey: key, bytes: downloaded.bytes, contentType: contentTypeOf(format.format) };
  };
}
