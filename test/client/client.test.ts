// DocindexClient against a real docindex listening on loopback: every method, retries after 429
// honouring Retry-After, Idempotency-Key on ingest, and the DocindexError a failure becomes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/adapters/ratelimit/memory.js';
import { buildApp } from '../../src/app.js';
import { DocindexClient, DocindexError, type WaitProgress, WaitTimeoutError } from '../../src/index.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { CORPUS_DIR, itWithCorpus } from '../helpers/shared.js';
import { listen, recordingFetch } from './support.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PDF = path.join(CORPUS_DIR, 'pdf/pdflatex-4-pages.pdf');

/** A loopback URL nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

async function rejection(promise: Promise<unknown>): Promise<DocindexError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DocindexError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

describe('DocindexClient', () => {
  let h: Harness;
  let baseUrl: string;
  let client: DocindexClient;
  const dir = mkdtempSync(path.join(tmpdir(), 'docindex-client-'));

  beforeAll(async () => {
    h = await startHarness();
    baseUrl = await listen(h.app);
    client = new DocindexClient({ baseUrl, apiKey: h.orgA.apiKey });
  });
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingests text, waits with batch status, queries, lists, iterates and deletes', async () => {
    const ack = await client.ingestText(
      [
        'Salmon swim upstream to spawn in the river where they hatched.',
        { text: 'Owls hunt at night and sleep during the day.', metadata: { topic: 'birds' } },
        'Bees dance to tell the hive where flowers are.',
      ],
      { chunkSize: 256, chunkOverlap: 32 },
    );
    expect(ack).toMatchObject({ status: 'accepted', org_id: h.orgA.orgId, queued: 3 });
    expect(ack.document_ids).toHaveLength(3);

    const seen: WaitProgress[] = [];
    const docs = await client.waitForDocuments(ack.document_ids, {
      timeoutMs: 20_000,
      onProgress: (p) => seen.push(p),
    });
    expect(docs.map((d) => d.id)).toEqual(ack.document_ids);
    expect(docs.map((d) => d.status)).toEqual(['ready', 'ready', 'ready']);
    expect(docs[0]).toMatchObject({ chunk_size: 256, chunk_overlap: 32 });
    expect(seen.at(-1)).toMatchObject({ total: 3, ready: 3, failed: 0, queued: 0, processing: 0 });

    const one = await client.getDocument(ack.document_ids[1]!);
    expect(one).toMatchObject({ id: ack.document_ids[1], status: 'ready', metadata: { topic: 'birds' } });

    const answer = await client.query({ query: 'owls at night', topK: 3 });
    expect(answer.org_id).toBe(h.orgA.orgId);
    expect(answer.results[0]).toMatchObject({ document_id: ack.document_ids[1], chunk_index: 0 });
    const filtered = await client.query({ query: 'salmon', filter: { topic: 'birds' } });
    expect(filtered.results).toEqual([]);
    const scoped = await client.query({ query: 'bees', documentIds: [ack.document_ids[2]!] });
    expect(scoped.results.map((r) => r.document_id)).toEqual([ack.document_ids[2]]);
    const shaped = await client.query({
      query: 'owls salmon bees',
      mode: 'keyword',
      maxChunksPerDocument: 1,
      scoreThreshold: 1e12,
    });
    expect(shaped).toMatchObject({ mode: 'keyword', degraded: false, results: [] });
    expect(answer.results[0]!.scores).toEqual({
      keyword: answer.results[0]!.score,
      semantic: null,
      rerank: null,
    });
    const rerank = await rejection(client.query({ query: 'owls', rerank: true, rerankCandidates: 20 }));
    expect(rerank).toMatchObject({ status: 400, code: 'rerank_unavailable' });
    const semantic = await rejection(client.query({ query: 'owls', mode: 'semantic', semanticWeight: 0.7 }));
    expect(semantic).toMatchObject({ status: 400, code: 'semantic_search_unavailable' });

    const batch = await client.listDocuments({ ids: ack.document_ids, limit: 100 });
    expect(batch.documents.map((d) => d.id).sort()).toEqual([...ack.document_ids].sort());
    const page = await client.listDocuments({ limit: 1, status: 'ready' });
    expect(page.documents).toHaveLength(1);
    expect(page.next_cursor).toEqual(expect.any(String));

    // Pages of one document each: the generator must follow every cursor.
    const all: string[] = [];
    for await (const doc of client.iterateDocuments({ pageSize: 1 })) all.push(doc.id);
    expect(all).toEqual(expect.arrayContaining(ack.document_ids));
    expect(new Set(all).size).toBe(all.length);

    const chunkPage = await client.listChunks(ack.document_ids[1]!, { limit: 1 });
    expect(chunkPage.chunks).toEqual([
      expect.objectContaining({ index: 0, text: expect.stringContaining('Owls hunt'), page_start: null }),
    ]);
    const patched = await client.updateMetadata(ack.document_ids[1]!, { reviewed: 'yes' });
    expect(patched.metadata).toMatchObject({ reviewed: 'yes' });
    const reviewed = await client.query({ query: 'owls', filter: { reviewed: 'yes' } });
    expect(reviewed.results.map((r) => r.document_id)).toEqual([ack.document_ids[1]]);
    expect(
      (await client.updateMetadata(ack.document_ids[1]!, { reviewed: null })).metadata,
    ).not.toHaveProperty('reviewed');

    await client.deleteDocument(ack.document_ids[0]!);
    const gone = await rejection(client.getDocument(ack.document_ids[0]!));
    expect(gone).toMatchObject({ status: 404, code: 'not_found' });
    expect((await client.query({ query: 'salmon' })).results).toEqual([]);

    const usage = await client.usage({ byPartition: true });
    expect(usage).toMatchObject({ org_id: h.orgA.orgId, period_days: 30, rate_limit_rpm: 1_000_000 });
    expect(usage.daily).toHaveLength(30);
    // Six answered queries; the refused semantic one is not counted.
    expect(usage.total_queries).toBe(6);
    expect(usage.daily[0]!.count).toBe(6);
    // None named a partition: the whole organisation's bucket holds them all.
    expect(usage.partitions).toEqual([{ partition: '(all)', total_queries: 6 }]);
    const none = await client.usage({ partition: 'default' });
    expect(none.total_queries).toBe(0);
    expect(none.partitions).toEqual([{ partition: 'default', total_queries: 0 }]);
    // Without asking, the report has the interface's fields only.
    expect(Object.keys(await client.usage()).sort()).toEqual([
      'daily',
      'org_id',
      'period_days',
      'rate_limit_rpm',
      'total_queries',
    ]);
  });

  it('reads back a document’s extracted text and its original file', async () => {
    const bytes = new TextEncoder().encode('Grebes carry their chicks on their backs.\n');
    const ack = await client.ingestFile(new Blob([bytes], { type: 'text/plain' }), {
      filename: 'grebe ✓.txt',
    });
    const text = await client.ingestText(['Cormorants dry their wings in the sun.']);
    await client.waitForDocuments([...ack.document_ids, ...text.document_ids], { timeoutMs: 30_000 });
    expect(await client.getDocumentContent(ack.document_ids[0]!)).toBe(
      'Grebes carry their chicks on their backs.\n',
    );
    expect(await client.getDocumentContent(text.document_ids[0]!)).toBe(
      'Cormorants dry their wings in the sun.',
    );
    const file = await client.getDocumentFile(ack.document_ids[0]!);
    expect(file).toEqual({ data: bytes, contentType: 'text/plain', filename: 'grebe ✓.txt' });
    const none = await rejection(client.getDocumentFile(text.document_ids[0]!));
    expect(none).toMatchObject({ status: 404, code: 'not_found' });
  });

  itWithCorpus(
    'uploads files by path (with pages for PDFs) and as Blobs, with metadata and a filename',
    async () => {
      const notes = path.join(dir, 'field-notes.md');
      writeFileSync(notes, '# Field notes\n\nThe heron waited motionless in the shallows.\n');
      const fromPath = await client.ingestFile(notes, { metadata: { source: 'disk' } });
      const fromBlob = await client.ingestFile(
        new Blob(['Kingfishers dive for small fish.'], { type: 'text/plain' }),
        {
          filename: 'kingfisher.txt',
        },
      );
      const pdf = await client.ingestFile(PDF);
      const ids = [...fromPath.document_ids, ...fromBlob.document_ids, ...pdf.document_ids];
      const docs = await client.waitForDocuments(ids, { timeoutMs: 30_000 });
      expect(docs.map((d) => [d.status, d.source.type, d.source.filename])).toEqual([
        ['ready', 'file', 'field-notes.md'],
        ['ready', 'file', 'kingfisher.txt'],
        ['ready', 'file', 'pdflatex-4-pages.pdf'],
      ]);
      expect(docs[0]!.metadata).toEqual({ source: 'disk' });

      const hit = (await client.query({ query: 'Huardest gefburn', documentIds: pdf.document_ids, topK: 1 }))
        .results[0];
      expect(hit?.page_start).toBeGreaterThanOrEqual(1);
      expect(hit?.page_end).toBeGreaterThanOrEqual(hit!.page_start!);
    },
  );

  it('versions a document: external ids, replaceContent (text and file) and reprocessDocument', async () => {
    const waitFor = async (id: string, version: number) => {
      for (;;) {
        const doc = await client.getDocument(id);
        const done = doc.status === 'ready' || doc.status === 'failed';
        if (doc.version === version && doc.pending_version === null && done) return doc;
        if (doc.pending_version?.version === version && doc.pending_version.status === 'failed') return doc;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const [id] = (await client.ingestText([{ text: 'the tern flies south', external_id: 'birds/tern' }]))
      .document_ids;
    await waitFor(id!, 1);
    expect((await client.getDocumentByExternalId('birds/tern'))?.id).toBe(id);
    expect(await client.getDocumentByExternalId('birds/none')).toBeNull();
    const file = path.join(dir, 'tern.txt');
    writeFileSync(file, 'the tern file flies north');
    const again = await client.ingestFile(file, { externalId: 'birds/tern' });
    expect(again.document_ids).toEqual([id]);
    expect((await waitFor(id!, 2)).source.type).toBe('file');
    expect(await client.replaceContent(id!, { text: 'the tern rests' })).toMatchObject({
      document_id: id,
      version: 3,
    });
    await waitFor(id!, 3);
    expect(await client.getDocumentContent(id!)).toBe('the tern rests');
    writeFileSync(file, 'the tern file again');
    expect((await client.replaceContent(id!, { file })).version).toBe(4);
    await waitFor(id!, 4);
    expect(await client.getDocumentContent(id!)).toBe('the tern file again');
    const reprocessed = await client.reprocessDocument(id!, { chunkSize: 128, chunkOverlap: 0 });
    expect(reprocessed.version).toBe(5);
    expect(await waitFor(id!, 5)).toMatchObject({ chunk_size: 128, chunk_overlap: 0, version: 5 });
    const missing = await rejection(
      client.replaceContent('00000000-0000-4000-8000-000000000000', { text: 'x' }),
    );
    expect(missing.status).toBe(404);
  });

  it('ingestFile and ingestUrl send chunkSize and chunkOverlap', async () => {
    const file = path.join(dir, 'gannets.txt');
    writeFileSync(file, 'Gannets dive into the sea from thirty metres up. '.repeat(200));
    const ack = await client.ingestFile(file, { chunkSize: 128, chunkOverlap: 0 });
    const [doc] = await client.waitForDocuments(ack.document_ids);
    expect(doc).toMatchObject({ status: 'ready', chunk_size: 128, chunk_overlap: 0 });
    const { chunks } = await client.listChunks(doc!.id, { limit: 100 });
    expect(chunks.length).toBeGreaterThan(10);
    expect(Math.max(...chunks.map((c) => c.token_count))).toBeLessThanOrEqual(128);

    // The URL is refused by the address policy only after the settings were checked.
    const refused = await rejection(
      client.ingestUrl('https://example.com/report.pdf', undefined, { chunkSize: 256, chunkOverlap: 256 }),
    );
    expect(refused.errors.map((e) => e.pointer)).toEqual(['/chunk_overlap']);
    const tooBig = await rejection(client.ingestFile(file, { chunkSize: 4097 }));
    expect(tooBig.errors.map((e) => e.pointer)).toEqual(['/chunk_size']);
  });

  it('filters queries and lists with operators, and deletes by filter', async () => {
    const key = (await h.runtime.admin.createOrg('filters')).api_key;
    const mine = new DocindexClient({ baseUrl, apiKey: key });
    const ack = await mine.ingestText([
      { text: 'Puffins nest on cliffs.', metadata: { year: '2019', region: 'north' } },
      { text: 'Puffins dive for sand eels.', metadata: { year: '2022', region: 'north' } },
      { text: 'Puffins winter at sea.', metadata: { year: '2024' } },
    ]);
    const [y2019, y2022, y2024] = ack.document_ids as [string, string, string];
    await mine.waitForDocuments(ack.document_ids, { intervalMs: 20 });

    const recent = await mine.query({ query: 'puffins', filter: { year: { $gte: '2020' } } });
    expect(recent.results.map((r) => r.document_id).sort()).toEqual([y2022, y2024].sort());
    const noRegion = await mine.listDocuments({ filter: { region: { $ne: 'north' } } });
    expect(noRegion.documents.map((d) => d.id)).toEqual([y2024]);
    const iterated = [];
    for await (const doc of mine.iterateDocuments({
      filter: { $or: [{ year: '2019' }, { year: '2024' }] },
    })) {
      iterated.push(doc.id);
    }
    expect(iterated.sort()).toEqual([y2019, y2024].sort());

    const invalid = await rejection(mine.query({ query: 'puffins', filter: { year: { $after: '2020' } } }));
    expect(invalid).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(invalid.errors).toEqual([{ pointer: '/filter/year/$after', message: expect.any(String) }]);

    expect(await mine.deleteDocuments({ filter: { region: 'north', year: { $lt: '2020' } } })).toEqual({
      deleted: 1,
      has_more: false,
    });
    expect(await mine.deleteDocuments({ documentIds: [y2024] })).toEqual({ deleted: 1, has_more: false });
    const left = await mine.query({ query: 'puffins' });
    expect(left.results.map((r) => r.document_id)).toEqual([y2022]);
  });

  it('ingests into partitions, narrows queries, lists and deletes to them, and lists and deletes partitions', async () => {
    const key = (await h.runtime.admin.createOrg('partitions')).api_key;
    const mine = new DocindexClient({ baseUrl, apiKey: key });
    const text = await mine.ingestText(['Otters hold hands while they sleep.'], { partition: 'river' });
    const file = await mine.ingestFile(new Blob(['Otters crack shells on their bellies.']), {
      filename: 'sea.txt',
      partition: 'sea',
    });
    const [river] = text.document_ids as [string];
    const [sea] = file.document_ids as [string];
    const docs = await mine.waitForDocuments([river, sea], { intervalMs: 20 });
    expect(docs.map((d) => d.partition)).toEqual(['river', 'sea']);

    const found = await mine.query({ query: 'otters', partitions: ['sea'] });
    expect(found.results.map((r) => r.document_id)).toEqual([sea]);
    const listed = await mine.listDocuments({ partitions: ['river'] });
    expect(listed.documents.map((d) => d.id)).toEqual([river]);
    expect((await mine.listPartitions()).partitions.map((p) => [p.name, p.documents, p.status])).toEqual([
      ['river', 1, 'active'],
      ['sea', 1, 'active'],
    ]);
    expect(await mine.deleteDocuments({ documentIds: [river, sea], partitions: ['river'] })).toEqual({
      deleted: 1,
      has_more: false,
    });
    expect(await mine.deletePartition('sea')).toEqual({ status: 'accepted', partition: 'sea' });
    // The worker's partition-purge queue takes the mark and empties the partition.
    await expect.poll(async () => (await mine.listPartitions()).partitions, { timeout: 10_000 }).toEqual([]);
    const unknown = await rejection(mine.deletePartition('sea'));
    expect(unknown).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('sends access lists on every ingest form and PATCH, and principals on queries, lists, reads and changes', async () => {
    const org = await h.runtime.admin.createOrg('access');
    const mine = new DocindexClient({ baseUrl, apiKey: org.api_key });
    const text = await mine.ingestText(
      [{ text: 'Badgers dig setts under old oaks.', access: ['group:hr'] }, 'Badgers forage at night.'],
      { access: ['user:1'] },
    );
    const file = await mine.ingestFile(new Blob(['Badgers groom each other.']), {
      filename: 'groom.txt',
      access: ['group:eng'],
    });
    const [hr, user1] = text.document_ids as [string, string];
    const [eng] = file.document_ids as [string];
    const docs = await mine.waitForDocuments([hr, user1, eng], { intervalMs: 20 });
    expect(docs.map((d) => d.access)).toEqual([['group:hr'], ['user:1'], ['group:eng']]);

    const asEng = { principals: ['group:eng'] };
    const found = await mine.query({ query: 'badgers', ...asEng });
    expect(found.results.map((r) => r.document_id)).toEqual([eng]);
    expect((await mine.listDocuments(asEng)).documents.map((d) => d.id)).toEqual([eng]);
    expect((await mine.getDocument(eng, asEng)).id).toBe(eng);
    expect(await rejection(mine.getDocument(hr, asEng))).toMatchObject({ status: 404 });
    expect(await rejection(mine.getDocumentContent(hr, asEng))).toMatchObject({ status: 404 });
    expect(await rejection(mine.listChunks(hr, asEng))).toMatchObject({ status: 404 });
    expect(await rejection(mine.updateMetadata(hr, { x: 'y' }, asEng))).toMatchObject({ status: 404 });
    expect(await rejection(mine.deleteDocument(hr, asEng))).toMatchObject({ status: 404 });
    expect(await mine.deleteDocuments({ documentIds: [hr], ...asEng })).toEqual({
      deleted: 0,
      has_more: false,
    });

    expect((await mine.updateAccess(hr, ['group:eng'])).access).toEqual(['group:eng']);
    expect((await mine.getDocument(hr, asEng)).access).toEqual(['group:eng']);
    expect((await mine.updateAccess(hr, null)).access).toBeNull();
    expect(
      await rejection(
        mine.replaceContent(user1, { text: 'Badgers sleep by day.' }, { access: ['group:eng'], ...asEng }),
      ),
    ).toMatchObject({ status: 404 });
    expect((await mine.getDocument(user1)).access).toEqual(['user:1']);
    await mine.replaceContent(user1, { text: 'Badgers sleep by day.' }, { access: ['group:eng'] });
    expect((await mine.getDocument(user1, asEng)).access).toEqual(['group:eng']);
  });

  it('a key bound to principals shows them and may not name another', async () => {
    const org = await h.runtime.admin.createOrg('bound');
    const issued = await h.runtime.admin.issueKey(org.org_id, { principals: ['user:3'] });
    const bound = new DocindexClient({ baseUrl, apiKey: issued.api_key });
    expect((await bound.org()).key.principals).toEqual(['user:3']);
    const widened = await rejection(bound.query({ query: 'x', principals: ['user:4'] }));
    expect(widened).toMatchObject({ status: 403, code: 'principal_forbidden' });
  });

  it('sends a fresh Idempotency-Key with every ingest call, or the one given', async () => {
    const recorder = recordingFetch();
    const recording = new DocindexClient({ baseUrl, apiKey: h.orgA.apiKey, fetch: recorder.fetch });
    await recording.ingestText(['first']);
    await recording.ingestUrl('http://127.0.0.1:9/never-fetched.txt').catch(() => {});
    await recording.ingestFile(new Blob(['a file']), { filename: 'a.txt' });
    await recording.ingestText(['chosen'], { idempotencyKey: 'my-key-123' });
    await recording.usage();
    const keys = recorder.exchanges.map((e) => e.headers.get('idempotency-key'));
    expect(keys.slice(0, 3).every((key) => key !== null && UUID.test(key))).toBe(true);
    expect(new Set(keys.slice(0, 3)).size).toBe(3);
    expect(keys[3]).toBe('my-key-123');
    expect(keys[4]).toBeNull(); // reads carry none
  });

  it('turns problem+json into DocindexError: validation, auth, not found, network', async () => {
    const invalid = await rejection(client.ingestText(['x'], { chunkSize: 200, chunkOverlap: 200 }));
    expect(invalid).toBeInstanceOf(Error);
    expect(invalid).toMatchObject({
      name: 'DocindexError',
      status: 400,
      code: 'invalid_request',
      title: 'Invalid request',
    });
    expect(invalid.errors).toEqual([{ pointer: '/chunk_overlap', message: expect.any(String) }]);
    expect(invalid.requestId).toMatch(/^req_/);
    expect(invalid.detail).toMatch(/chunk_overlap/);

    const unauthorized = await rejection(new DocindexClient({ baseUrl, apiKey: 'dix_nope' }).usage());
    expect(unauthorized).toMatchObject({ status: 401, code: 'unauthorized' });

    const foreign = await h.ingest(h.orgB, ['belongs to org B']);
    const notFound = await rejection(client.getDocument(foreign[0]!));
    expect(notFound).toMatchObject({ status: 404, code: 'not_found', errors: [] });

    const closed = new DocindexClient({ baseUrl: await closedPortUrl(), apiKey: 'dix_x', maxRetries: 0 });
    const network = await rejection(closed.usage());
    expect(network).toMatchObject({ status: 0, code: 'network_error', requestId: null });
    expect(network.detail).toMatch(/ECONNREFUSED/);
  });

  describe('with a low rate limit (2 requests per 2-second window)', () => {
    let limited: FastifyInstance;
    let limitedUrl: string;
    beforeAll(async () => {
      // The same runtime behind an app whose limiter has a 2 s window, so Retry-After is short.
      limited = await buildApp({
        ...h.runtime.appDeps,
        rateLimiter: new MemoryRateLimiter({ windowSeconds: 2 }),
      });
      limitedUrl = await listen(limited);
      await h.runtime.admin.setRateLimit(h.orgB.orgId, 2);
    });
    afterAll(() => limited.close());

    it('waits for Retry-After after a 429, then succeeds, with the same Idempotency-Key', async () => {
      const recorder = recordingFetch();
      const retrying = new DocindexClient({
        baseUrl: limitedUrl,
        apiKey: h.orgB.apiKey,
        fetch: recorder.fetch,
      });
      await retrying.usage();
      await retrying.usage();
      const ack = await retrying.ingestText(['retried once']);
      expect(ack.queued).toBe(1);

      const ingests = recorder.exchanges.filter((e) => e.method === 'POST');
      expect(ingests.map((e) => e.status)).toEqual([429, 202]);
      const retryAfter = Number(ingests[0]!.retryAfter);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(ingests[1]!.at - ingests[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000 - 50);
      const key = ingests[0]!.headers.get('idempotency-key');
      expect(key).toMatch(UUID);
      expect(ingests[1]!.headers.get('idempotency-key')).toBe(key);
    });

    it('gives up with a typed 429 when out of retries, or when Retry-After is past its bound', async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_100)); // a fresh window
      const noRetry = new DocindexClient({ baseUrl: limitedUrl, apiKey: h.orgB.apiKey, maxRetries: 0 });
      await noRetry.usage();
      await noRetry.usage();
      const limitedError = await rejection(noRetry.usage());
      expect(limitedError).toMatchObject({ status: 429, code: 'rate_limited', title: 'Too many requests' });
      expect(limitedError.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(limitedError.requestId).toMatch(/^req_/);

      const recorder = recordingFetch();
      const impatient = new DocindexClient({
        baseUrl: limitedUrl,
        apiKey: h.orgB.apiKey,
        fetch: recorder.fetch,
        maxRetryDelayMs: 100,
      });
      const started = Date.now();
      await expect(impatient.usage()).rejects.toMatchObject({ status: 429 });
      expect(Date.now() - started).toBeLessThan(900);
      expect(recorder.exchanges).toHaveLength(1);
    });
  });
});

describe('DocindexClient without workers (nothing finishes)', () => {
  let h: Harness;
  let baseUrl: string;
  beforeAll(async () => {
    h = await startHarness({ worker: false, env: { MAX_QUEUED_DOCUMENTS: '120' } });
    baseUrl = await listen(h.app);
  });
  afterAll(() => h.close());

  it('polls at most 100 ids per request and throws WaitTimeoutError with what is pending', async () => {
    const client = new DocindexClient({ baseUrl, apiKey: h.orgA.apiKey });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const texts = Array.from({ length: 40 }, (_, j) => `document ${i * 40 + j}`);
      ids.push(...(await client.ingestText(texts)).document_ids);
    }
    const recorder = recordingFetch();
    const polling = new DocindexClient({ baseUrl, apiKey: h.orgA.apiKey, fetch: recorder.fetch });
    const error = await polling.waitForDocuments(ids, { timeoutMs: 400, intervalMs: 100 }).catch((e) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).pending).toHaveLength(120);
    expect((error as WaitTimeoutError).documents.every((d) => d.status === 'queued')).toBe(true);
    const batches = recorder.exchanges.map((e) => e.url.searchParams.get('ids')!.split(','));
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...batches.map((b) => b.length))).toBe(100);
    expect(batches[0]!.length + batches[1]!.length).toBe(120);
  });

  it('a 503 whose Retry-After is past the bound fails at once as `overloaded`', async () => {
    const recorder = recordingFetch();
    const client = new DocindexClient({
      baseUrl,
      apiKey: h.orgA.apiKey,
      fetch: recorder.fetch,
      maxRetryDelayMs: 1_000,
    });
    const overloaded = await rejection(client.ingestText(['one too many']));
    expect(overloaded).toMatchObject({ status: 503, code: 'overloaded', retryAfterSeconds: 5 });
    expect(recorder.exchanges).toHaveLength(1);
  });
});
