// The domain services' own rules, on in-memory ports: what ingestion commits, enqueues, refuses and
// cleans up; what a query counts; how the usage report fills its days; what the reconciler
// re-enqueues. Backends are tested for real in test/contract/; the processor's retries (with real
// stores) in test/pipeline/processor.test.ts.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { type IngestionDeps, IngestionService } from '../../src/domain/ingestion.js';
import { ALL_PARTITIONS } from '../../src/domain/partitions.js';
import { QueryService } from '../../src/domain/query.js';
import { QueueReconciler } from '../../src/domain/reconciler.js';
import { UsageService } from '../../src/domain/usage.js';
import { FakeDocuments, FakeKeywordIndex, FakeQueue, FixedClock, MemoryBlobs, MemoryUsage } from './fakes.js';

const ORG = 'org_test';
const NOW = new Date('2026-03-10T15:00:00.000Z');

function ingestion(over: Partial<IngestionDeps> = {}) {
  const documents = new FakeDocuments();
  const queue = new FakeQueue();
  const downloadQueue = new FakeQueue();
  const blobs = new MemoryBlobs();
  const enqueueErrors: unknown[] = [];
  const service = new IngestionService({
    documents: documents.asPort(),
    queue,
    downloadQueue,
    blobs,
    clock: new FixedClock(NOW),
    pipeline: {
      sniffFormat: async ({ filename }) =>
        filename?.endsWith('.pdf')
          ? { ok: true, contentType: 'application/pdf' }
          : { ok: false, detail: 'not a PDF' },
      screenUrl: (raw) =>
        raw.startsWith('https://')
          ? { ok: true, displayUrl: raw.split('?')[0]! }
          : { ok: false, reason: 'blocked' },
    },
    limits: { maxQueuedDocuments: 10, maxUploadBytes: 1000, tokenizer: 'o200k_base' },
    onEnqueueError: (error) => enqueueErrors.push(error),
    ...over,
  });
  return { service, documents, queue, downloadQueue, blobs, enqueueErrors };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

const upload = (bytes: number, filename: string) => ({
  stream: Readable.from([Buffer.alloc(bytes, 0x25)]),
  filename,
});

describe('IngestionService', () => {
  it('commits the documents, then enqueues exactly those, marked as just created', async () => {
    const { service, documents, queue } = ingestion();
    const ack = await service.ingestText(
      ORG,
      ALL_PARTITIONS,
      [{ text: 'one' }, { text: 'two\u0000', metadata: { k: 'v' } }],
      {
        chunkSize: 256,
        chunkOverlap: 32,
      },
    );
    expect(ack).toMatchObject({ status: 'accepted', org_id: ORG, queued: 2 });
    expect(documents.created.map((d) => d.id)).toEqual(ack.document_ids);
    expect(documents.created[1]).toMatchObject({ text: 'two', metadata: { k: 'v' }, chunkSize: 256 });
    expect(queue.enqueued).toEqual([
      { jobs: ack.document_ids.map((id) => ({ documentId: id, orgId: ORG })), created: true, version: false },
    ]);
  });

  it('queues a new version of a document as a version: a run of the older one may still be going', async () => {
    const { service, documents, queue } = ingestion();
    documents.existing.add('doc_1');
    const ack = await service.replaceContent(ORG, ALL_PARTITIONS, 'doc_1', {
      kind: 'text',
      text: 'new text',
    });
    expect(ack).toMatchObject({ status: 'accepted', document_id: 'doc_1', version: 2 });
    expect(documents.versions.map((v) => v.version.text)).toEqual(['new text']);
    expect(queue.enqueued).toEqual([
      { jobs: [{ documentId: 'doc_1', orgId: ORG }], created: false, version: true },
    ]);
  });

  it('acknowledges nothing and enqueues nothing when the commit fails', async () => {
    const { service, documents, queue } = ingestion();
    documents.failCreate = new Error('disk full');
    await expect(
      service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'x' }], { chunkSize: 512, chunkOverlap: 64 }),
    ).rejects.toThrow('disk full');
    expect(queue.enqueued).toEqual([]);
  });

  it('still accepts when the enqueue after the commit fails, and says so for the reconciler', async () => {
    const { service, documents, enqueueErrors, queue } = ingestion();
    queue.failEnqueue = new Error('redis down');
    const ack = await service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'x' }], {
      chunkSize: 512,
      chunkOverlap: 64,
    });
    expect(ack.queued).toBe(1);
    expect(documents.created).toHaveLength(1);
    expect(enqueueErrors).toEqual([queue.failEnqueue]);
  });

  it('refuses with 503 and a Retry-After once the waiting documents would pass the limit', async () => {
    const { service, documents } = ingestion();
    documents.pending = 9;
    await service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'fits' }], { chunkSize: 512, chunkOverlap: 64 });
    const error = await refusal(
      service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'one too many' }], {
        chunkSize: 512,
        chunkOverlap: 64,
      }),
    );
    expect(error).toMatchObject({ status: 503, code: 'overloaded', extra: { retryAfterSeconds: 5 } });
    expect(documents.created).toHaveLength(1);
  });

  it('counts the waiting documents again once its last count is more than a second old on its clock', async () => {
    const clock = new FixedClock(NOW);
    const { service, documents } = ingestion({ clock });
    documents.pending = 9;
    await service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'fits' }], { chunkSize: 512, chunkOverlap: 64 });
    documents.pending = 0;
    const text = [{ text: 'counted again' }];
    await expect(
      service.ingestText(ORG, ALL_PARTITIONS, text, { chunkSize: 512, chunkOverlap: 64 }),
    ).rejects.toMatchObject({ code: 'overloaded' });
    clock.at = new Date(NOW.getTime() + 1_001);
    const ack = await service.ingestText(ORG, ALL_PARTITIONS, text, { chunkSize: 512, chunkOverlap: 64 });
    expect(ack.queued).toBe(1);
  });

  it('refuses an overlap not smaller than the chunk size, pointing at chunk_overlap', async () => {
    const { service } = ingestion();
    const error = await refusal(
      service.ingestText(ORG, ALL_PARTITIONS, [{ text: 'x' }], { chunkSize: 64, chunkOverlap: 64 }),
    );
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(error.extra.errors?.map((e) => e.pointer)).toEqual(['/chunk_overlap']);
  });

  it('sends a URL document to the download lane with the URL kept for fetching and shown without its query', async () => {
    const { service, documents, queue, downloadQueue } = ingestion();
    const ack = await service.ingestUrl(
      ORG,
      ALL_PARTITIONS,
      'https://example.test/report.pdf?signature=secret',
      {},
    );
    expect(downloadQueue.ids()).toEqual(ack.document_ids);
    expect(queue.enqueued).toEqual([]);
    expect(documents.created[0]).toMatchObject({
      fetchUrl: 'https://example.test/report.pdf?signature=secret',
      source: { type: 'url', url: 'https://example.test/report.pdf' },
    });
    const error = await refusal(service.ingestUrl(ORG, ALL_PARTITIONS, 'http://169.254.169.254/', {}));
    expect(error).toMatchObject({ status: 400 });
    expect(error.extra.errors).toEqual([{ pointer: '/url', message: 'blocked' }]);
  });

  it('stages an upload, then commits it with the sniffed type and its size', async () => {
    const { service, documents, blobs, queue } = ingestion();
    let key = '';
    const ack = await service.withStagedFile(
      upload(200, 'report.pdf'),
      async () => ({ team: 'a' }),
      (staged) => {
        expect(staged).toMatchObject({ contentType: 'application/pdf', metadata: { team: 'a' } });
        key = staged.blob.key;
        return service.commitFile(ORG, ALL_PARTITIONS, staged);
      },
    );
    expect(documents.created[0]).toMatchObject({
      blobKey: key,
      source: { type: 'file', filename: 'report.pdf', content_type: 'application/pdf', bytes: 200 },
    });
    expect(blobs.blobs.has(key)).toBe(true);
    expect(blobs.deleted).toEqual([]);
    expect(queue.ids()).toEqual(ack.document_ids);
  });

  it('leaves no blob behind for an upload it refuses: too large (413), empty or of an unknown format (415)', async () => {
    const { service, blobs } = ingestion();
    const noMetadata = async () => ({});
    const stage = (bytes: number, filename: string) =>
      service.withStagedFile(upload(bytes, filename), noMetadata, async () => {
        throw new Error('a refused upload is never handed on');
      });
    expect(await refusal(stage(1001, 'big.pdf'))).toMatchObject({ status: 413 });
    expect(await refusal(stage(0, 'empty.pdf'))).toMatchObject({
      status: 415,
      detail: 'The file is empty.',
    });
    expect(await refusal(stage(10, 'notes.xyz'))).toMatchObject({ status: 415, detail: 'not a PDF' });
    expect([...blobs.blobs.keys()]).toEqual([]);
  });

  it('removes the staged blob, once, when the commit of an upload fails', async () => {
    const { service, documents, blobs } = ingestion();
    documents.failCreate = new Error('constraint');
    let key = '';
    await expect(
      service.withStagedFile(
        upload(10, 'a.pdf'),
        async () => ({}),
        (staged) => {
          key = staged.blob.key;
          return service.commitFile(ORG, ALL_PARTITIONS, staged);
        },
      ),
    ).rejects.toThrow('constraint');
    expect(blobs.deleted).toEqual([key]);
    expect(blobs.blobs.size).toBe(0);
  });

  it('removes a staged upload no commit kept (a replayed request), once', async () => {
    const { service, blobs } = ingestion();
    let key = '';
    const answer = await service.withStagedFile(
      upload(10, 'a.pdf'),
      async () => ({}),
      async (staged) => {
        key = staged.blob.key;
        await staged.discard();
        return 'the first answer';
      },
    );
    expect(answer).toBe('the first answer');
    expect(blobs.deleted).toEqual([key]);
    expect(blobs.blobs.size).toBe(0);
  });
});

describe('QueryService', () => {
  it('searches with clean text and the parsed filter, and counts the query for today', async () => {
    const search = new FakeKeywordIndex();
    const usage = new MemoryUsage();
    const service = new QueryService(search, new UsageService(usage, new FixedClock(NOW)));
    await service.query(ORG, ALL_PARTITIONS, {
      query: 'q\u0000uokka',
      topK: 5,
      filter: { team: 'a\u0000', lang: ['en', 'de'] },
      documentIds: null,
    });
    expect(search.queries).toEqual([
      {
        orgId: ORG,
        query: 'quokka',
        topK: 5,
        filter: {
          kind: 'and',
          filters: [
            { kind: 'compare', op: '$eq', key: 'team', value: 'a' },
            { kind: 'list', op: '$in', key: 'lang', values: ['en', 'de'] },
          ],
        },
        documentIds: null,
        partitions: null,
        principals: null,
        language: null,
      },
    ]);
    expect(usage.counts.get(`${ORG} 2026-03-10`)).toBe(1);
  });

  it('does not count a query whose search failed', async () => {
    const search = new FakeKeywordIndex();
    search.fail = new Error('database gone');
    const usage = new MemoryUsage();
    const service = new QueryService(search, new UsageService(usage, new FixedClock(NOW)));
    await expect(
      service.query(ORG, ALL_PARTITIONS, { query: 'x', topK: 1, filter: undefined, documentIds: null }),
    ).rejects.toThrow();
    expect(usage.counts.size).toBe(0);
  });
});

describe('UsageService', () => {
  it('reports 30 UTC days, newest first, zero-filled, without days outside the period', async () => {
    const usage = new MemoryUsage();
    for (const day of ['2026-03-10', '2026-03-10', '2026-02-09', '2026-02-08'])
      await usage.increment(ORG, day);
    await usage.increment('org_other', '2026-03-10');
    const report = await new UsageService(usage, new FixedClock(NOW)).report(ORG, 600);
    expect(report.daily).toHaveLength(30);
    expect(report.daily[0]).toEqual({ date: '2026-03-10', count: 2 });
    expect(report.daily[29]).toEqual({ date: '2026-02-09', count: 1 });
    expect(report).toMatchObject({ org_id: ORG, period_days: 30, total_queries: 3, rate_limit_rpm: 600 });
  });
});

describe('QueueReconciler', () => {
  it('enqueues again only the stale documents whose queue has no job, each on its own lane', async () => {
    const documents = new FakeDocuments();
    const process = new FakeQueue();
    const download = new FakeQueue();
    documents.stale = [
      { documentId: 'd1', orgId: ORG, needsDownload: false },
      { documentId: 'd2', orgId: ORG, needsDownload: false },
      { documentId: 'u1', orgId: ORG, needsDownload: true },
    ];
    process.known.add('d2');
    const reconciler = new QueueReconciler(
      documents.asPort(),
      { process, download },
      new FixedClock(NOW),
      60_000,
    );
    expect(await reconciler.runOnce()).toBe(2);
    expect(process.enqueued).toEqual([
      { jobs: [{ documentId: 'd1', orgId: ORG }], created: false, version: false },
    ]);
    expect(download.enqueued).toEqual([
      { jobs: [{ documentId: 'u1', orgId: ORG }], created: false, version: false },
    ]);
    // Each pass also finishes deletes a crashed index write left behind.
    expect(documents.finishDeletesCalls).toBe(1);
  });
});
