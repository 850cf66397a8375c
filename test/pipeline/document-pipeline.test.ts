// The DocumentPipeline port as start/pipeline.ts builds it, each operation once through its one
// implementation: an upload's format, a submitted URL's screening, a download into the blob
// store, and a file's and a text's chunks from the pipeline threads.
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/adapters/blob/fs-blob-store.js';
import { loadConfig } from '../../src/config/index.js';
import { collectChunks } from '../../src/domain/chunk-batches.js';
import type { DocumentPipeline } from '../../src/domain/ports.js';
import { createAddressPolicy } from '../../src/pipeline/fetch/index.js';
import {
  submitChecks,
  submittedUrlRefusal,
  type WorkerPipeline,
  workerPipeline,
} from '../../src/start/pipeline.js';
import { makeTempDir, type TempDir } from './extract-support.js';

const TEXT = 'Otters hold hands while they sleep, so that they do not drift apart.\n';
const OPTIONS = { chunkSize: 128, chunkOverlap: 16 };

describe('DocumentPipeline (start/pipeline.ts)', () => {
  let tmp: TempDir;
  let server: http.Server;
  let origin: string;
  let worker: WorkerPipeline;
  let pipeline: DocumentPipeline;
  let blobs: FsBlobStore;
  const signal = new AbortController().signal;
  /** The same server's port on 127.0.0.2, which the policy (127.0.0.1 only) refuses. */
  const blocked = (pathname: string) => `${origin.replace('127.0.0.1', '127.0.0.2')}${pathname}`;

  beforeAll(async () => {
    tmp = await makeTempDir();
    server = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end(TEXT);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = loadConfig({ DATA_DIR: tmp.dir, EXTRACT_WORKERS: '1' });
    const policy = createAddressPolicy({ allow: ['127.0.0.1'] });
    blobs = new FsBlobStore(path.join(tmp.dir, 'blobs'));
    worker = workerPipeline(config, { checks: submitChecks(policy), policy, blobs });
    pipeline = worker.pipeline;
  });
  afterAll(async () => {
    await worker.close();
    await new Promise((resolve) => server.close(resolve));
    await tmp.remove();
  });

  it('sniffFormat: a media type from the bytes and the name, or why the file is refused', async () => {
    const text = path.join(tmp.dir, 'notes.txt');
    await writeFile(text, TEXT);
    expect(await pipeline.sniffFormat({ path: text, filename: 'notes.txt' })).toEqual({
      ok: true,
      contentType: 'text/plain',
    });
    const refused = await pipeline.sniffFormat({ path: text, filename: 'notes.pdf' });
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : refused.detail).not.toBe('');
  });

  it('screenUrl: shown without its query string; a refused address with the reason', () => {
    expect(pipeline.screenUrl(`${origin}/report.pdf?signature=secret`)).toEqual({
      ok: true,
      displayUrl: `${origin}/report.pdf`,
    });
    // A loopback address the policy does not allow stands for every address it refuses.
    const refused = pipeline.screenUrl(blocked('/latest'));
    expect(refused.ok).toBe(false);
    const refusal = submittedUrlRefusal(pipeline)(blocked('/latest'));
    expect(refusal).toBe(refused.ok ? null : refused.reason);
    expect(submittedUrlRefusal(pipeline)(`${origin}/`)).toBeNull();
  });

  it('downloadUrl: the bytes into the blob store with their format; a refused address fails url_blocked', async () => {
    const downloaded = await pipeline.downloadUrl(`${origin}/notes.txt`, signal);
    expect(downloaded).toMatchObject({ bytes: Buffer.byteLength(TEXT), contentType: 'text/plain' });
    const stored = await blobs.withLocalFile(downloaded.blobKey, (file) => readFile(file, 'utf8'));
    expect(stored).toBe(TEXT);
    await expect(pipeline.downloadUrl(blocked('/latest'), signal)).rejects.toMatchObject({
      code: 'url_blocked',
    });
  });

  it('indexFile and indexText: the same chunks, with their search words, for the same text', async () => {
    const file = path.join(tmp.dir, 'otters.txt');
    await writeFile(file, TEXT);
    const read = (stream: ReturnType<DocumentPipeline['indexText']>) =>
      collectChunks({ ...stream, contentType: null, bytes: null });
    const fromFile = await read(pipeline.indexFile(file, 'txt', OPTIONS, signal, 'org_a'));
    const fromText = await read(pipeline.indexText(TEXT, OPTIONS, signal, 'org_a'));
    expect(fromFile.chunks.length).toBeGreaterThan(0);
    expect(fromFile.chunks.map((c) => [c.text, c.words])).toEqual(
      fromText.chunks.map((c) => [c.text, c.words]),
    );
    expect(fromFile.chunks[0]?.words).toContain('otter');
    expect(fromFile.totals.contentSha256).toBe(fromText.totals.contentSha256);
  });
});
