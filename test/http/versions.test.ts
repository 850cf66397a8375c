// New versions of a document over HTTP: re-ingest of an external_id, PUT /v1/documents/{id}/content
// (text or file) and POST /v1/documents/{id}/reprocess, with the current version answering until
// the new one is ready, a failed new version leaving it in place, and Idempotency-Key. Runs on the
// embedded backend, and on PostgreSQL + Redis with TEST_BACKEND=scale-out (the harness's project).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { multipart } from '../helpers/multipart.js';

const FIXTURES = new URL('../fixtures/extract/', import.meta.url);

describe('document versions', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const get = async (id: string, org: TestOrg = h.orgA) =>
    (await h.request('GET', `/v1/documents/${id}`, { key: org.apiKey })).json() as Record<string, unknown>;

  /** Polls until `version` is the current one, or it failed as the pending one; the record then. */
  const waitForVersion = async (id: string, version: number) => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const doc = await get(id);
      const pending = doc.pending_version as { version: number; status: string } | null;
      if (
        doc.version === version &&
        pending === null &&
        (doc.status === 'ready' || doc.status === 'failed')
      ) {
        return doc;
      }
      if (pending?.version === version && pending.status === 'failed') return doc;
      if ((doc.version as number) > version) return doc;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`version ${version} of ${id} not done in time: ${JSON.stringify(await get(id))}`);
  };

  const search = async (query: string, id: string) =>
    (
      (await h.request('POST', '/v1/query', { body: { query, document_ids: [id] } })).json().results as {
        text: string;
      }[]
    ).map((r) => r.text);

  const putText = (id: string, text: string, headers: Record<string, string> = {}) =>
    h.request('PUT', `/v1/documents/${id}/content`, { body: { text }, headers });

  it('re-ingesting an external_id makes a new version of the same document', async () => {
    const first = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ text: 'the heron waits by the reeds', external_id: 'wiki/heron' }] },
    });
    expect(first.statusCode).toBe(202);
    const id = first.json().document_ids[0] as string;
    await waitForVersion(id, 1);
    expect(await get(id)).toMatchObject({ external_id: 'wiki/heron', version: 1, pending_version: null });

    const second = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ text: 'the kingfisher dives for fish', external_id: 'wiki/heron' }] },
    });
    expect(second.json()).toMatchObject({ queued: 1, document_ids: [id] });
    const doc = await waitForVersion(id, 2);
    expect(doc).toMatchObject({ status: 'ready', version: 2, pending_version: null });
    expect(await search('heron', id)).toEqual([]);
    expect(await search('kingfisher', id)).toEqual(['the kingfisher dives for fish']);

    const listed = await h.request('GET', '/v1/documents?external_id=wiki%2Fheron');
    expect(listed.json().documents.map((d: { id: string }) => d.id)).toEqual([id]);
    // Another org's external ids are its own.
    const other = await h.request('GET', '/v1/documents?external_id=wiki%2Fheron', { key: h.orgB.apiKey });
    expect(other.json().documents).toEqual([]);
  });

  it('a re-ingest replaces the metadata with what it sends; PUT content keeps it', async () => {
    const send = (metadata?: Record<string, string>) =>
      h.request('POST', '/v1/ingest', {
        body: {
          documents: [{ text: 'the puffin', external_id: 'meta/puffin', ...(metadata ? { metadata } : {}) }],
        },
      });
    const id = (await send({ colony: 'north', year: '2025' })).json().document_ids[0] as string;
    await waitForVersion(id, 1);
    await send({ colony: 'south' });
    expect((await get(id)).metadata).toEqual({ colony: 'south' });
    await waitForVersion(id, 2);
    await putText(id, 'the puffin again');
    expect((await waitForVersion(id, 3)).metadata).toEqual({ colony: 'south' });
    await send();
    expect((await get(id)).metadata).toEqual({});
  });

  it('refuses an external_id longer than 255 characters with a pointer to it', async () => {
    const res = await h.request('POST', '/v1/ingest', {
      body: { documents: [{ text: 'x', external_id: 'e'.repeat(256) }] },
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json().errors)).toContain('/documents/0/external_id');
  });

  it('PUT content: the old text answers until the new one is ready, then only the new one', async () => {
    const [id] = await h.ingest(h.orgA, ['the old text speaks of otters'], {
      chunk_size: 256,
      chunk_overlap: 0,
    });
    await h.waitForDone(h.orgA, [id!]);
    const res = await putText(id!, 'the new text speaks of beavers');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ status: 'accepted', org_id: h.orgA.orgId, document_id: id, version: 2 });
    // Whatever moment this query lands on, exactly one version answers it.
    expect(await search('otters beavers', id!)).toHaveLength(1);
    const doc = await waitForVersion(id!, 2);
    expect(doc).toMatchObject({ version: 2, chunk_size: 256, chunk_overlap: 0, pending_version: null });
    expect(await search('otters', id!)).toEqual([]);
    expect(await search('beavers', id!)).toEqual(['the new text speaks of beavers']);
    expect((await h.request('GET', `/v1/documents/${id}/content`)).body).toBe(
      'the new text speaks of beavers',
    );
    const chunks = (await h.request('GET', `/v1/documents/${id}/chunks`)).json().chunks;
    expect(chunks.map((c: { text: string }) => c.text)).toEqual(['the new text speaks of beavers']);
  });

  it('a chunk cursor pages through one version: after a swap it answers 409 version_changed', async () => {
    const paragraphs = (word: string) =>
      Array.from({ length: 12 }, (_, i) => `${word} paragraph ${i} ${'with some filler words '.repeat(30)}`);
    const [id] = await h.ingest(h.orgA, [paragraphs('otter').join('\n\n')], {
      chunk_size: 128,
      chunk_overlap: 0,
    });
    await h.waitForDone(h.orgA, [id!]);
    const first = (await h.request('GET', `/v1/documents/${id}/chunks?limit=2`)).json();
    expect(first.chunks.map((c: { text: string }) => c.text.split(' ')[0])).toEqual(['otter', 'otter']);
    expect(first.next_cursor).toEqual(expect.any(String));
    // The same cursor goes on while the version stands.
    const second = await h.request('GET', `/v1/documents/${id}/chunks?limit=2&cursor=${first.next_cursor}`);
    expect(second.statusCode).toBe(200);
    expect(second.json().chunks[0].index).toBe(2);

    expect((await putText(id!, paragraphs('beaver').join('\n\n'))).statusCode).toBe(202);
    await waitForVersion(id!, 2);
    const stale = await h.request('GET', `/v1/documents/${id}/chunks?limit=2&cursor=${first.next_cursor}`);
    expect(stale.statusCode).toBe(409);
    expect(stale.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(stale.json()).toMatchObject({ code: 'version_changed', status: 409 });
    expect(stale.json().detail).toContain('from version 1 to 2');
    // Started again without a cursor, every page is the new version's.
    const again = (await h.request('GET', `/v1/documents/${id}/chunks?limit=100`)).json();
    expect(again.chunks.every((c: { text: string }) => c.text.startsWith('beaver'))).toBe(true);
  });

  it('PUT content with a file: the new original replaces the old one, whose blob is removed', async () => {
    const before = new Set(await h.blobFiles());
    const upload = async (method: 'POST' | 'PUT', url: string, text: string) => {
      const { payload, contentType } = await multipart([
        { name: 'file', value: Buffer.from(text), filename: 'n.txt' },
      ]);
      return h.request(method, url, { payload, headers: { 'content-type': contentType } });
    };
    const created = await upload('POST', '/v1/ingest/file', 'first file about lynxes');
    const id = created.json().document_ids[0] as string;
    await waitForVersion(id, 1);
    const replaced = await upload('PUT', `/v1/documents/${id}/content`, 'second file about wolverines');
    expect(replaced.statusCode).toBe(202);
    await waitForVersion(id, 2);
    expect((await h.request('GET', `/v1/documents/${id}/file`)).body).toBe('second file about wolverines');
    expect(await search('lynxes', id)).toEqual([]);
    expect(await search('wolverines', id)).toEqual(['second file about wolverines']);
    const added = (await h.blobFiles()).filter((f) => !before.has(f));
    expect(added).toHaveLength(1);
  });

  it('a failed new version leaves the current one answering, with the error on pending_version', async () => {
    const [id] = await h.ingest(h.orgA, ['the steady text about ospreys']);
    await h.waitForDone(h.orgA, [id!]);
    const pdf = readFileSync(new URL('hyphenation.pdf', FIXTURES));
    const broken = pdf.subarray(0, Math.floor(pdf.length / 2));
    const { payload, contentType } = await multipart([{ name: 'file', value: broken, filename: 'cut.pdf' }]);
    const res = await h.request('PUT', `/v1/documents/${id}/content`, {
      payload,
      headers: { 'content-type': contentType },
    });
    expect(res.statusCode).toBe(202);
    const doc = await waitForVersion(id!, 2);
    expect(doc).toMatchObject({
      status: 'ready',
      version: 1,
      error: null,
      pending_version: { version: 2, status: 'failed', error: { code: 'corrupt' } },
    });
    expect(await search('ospreys', id!)).toEqual(['the steady text about ospreys']);
    expect((await h.request('GET', `/v1/documents/${id}/content`)).body).toBe(
      'the steady text about ospreys',
    );
  });

  it('reprocess re-chunks a text with new settings as a new version', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence ${i} tells of puffins on the cliffs.`).join(
      ' ',
    );
    const [id] = await h.ingest(h.orgA, [text], { chunk_size: 512, chunk_overlap: 64 });
    const [v1] = await h.waitForDone(h.orgA, [id!]);
    const res = await h.request('POST', `/v1/documents/${id}/reprocess`, {
      body: { chunk_size: 128, chunk_overlap: 16 },
    });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ document_id: id, version: 2 });
    const v2 = await waitForVersion(id!, 2);
    expect(v2).toMatchObject({ version: 2, chunk_size: 128, chunk_overlap: 16 });
    expect(v2.chunk_count as number).toBeGreaterThan(v1!.chunk_count as number);
    expect((await h.request('GET', `/v1/documents/${id}/content`)).body).toBe(text);
    expect(v2.content_sha256).toBe(v1!.content_sha256);
  });

  it('reprocess sent 30 times at once starts one version; the other 29 answer 409 cannot_reprocess', async () => {
    const text = Array.from({ length: 400 }, (_, i) => `Line ${i} counts gannets on the stack.`).join(' ');
    const [id] = await h.ingest(h.orgA, [text]);
    await h.waitForDone(h.orgA, [id!]);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        h.request('POST', `/v1/documents/${id}/reprocess`, { body: { chunk_size: 128, chunk_overlap: 16 } }),
      ),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([202, ...Array<number>(29).fill(409)]);
    for (const r of answers.filter((a) => a.statusCode === 409)) {
      expect(r.json()).toMatchObject({ code: 'cannot_reprocess' });
    }
    expect((await waitForVersion(id!, 2)).chunk_size).toBe(128);
  });

  it('a reprocess that loses the race to PUT content answers 409 and the new content is kept', async () => {
    const text = Array.from({ length: 3000 }, (_, i) => `Line ${i} counts gannets on the stack.`).join(' ');
    const [id] = await h.ingest(h.orgA, [text]);
    await h.waitForDone(h.orgA, [id!]);
    // Both at once, many times: whichever order they land in, the PUT's text ends up current.
    for (let round = 0; round < 4; round += 1) {
      const [reprocess, put] = await Promise.all([
        h.request('POST', `/v1/documents/${id}/reprocess`, { body: {} }),
        putText(id!, `round ${round}: the puffins came back`),
      ]);
      expect(put.statusCode).toBe(202);
      expect([202, 409]).toContain(reprocess.statusCode);
      const version = put.json().version as number;
      if (reprocess.statusCode === 202) expect(reprocess.json().version).toBeLessThan(version);
      await waitForVersion(id!, version);
      expect((await h.request('GET', `/v1/documents/${id}/content`)).body).toBe(
        `round ${round}: the puffins came back`,
      );
    }
  });

  it('reprocess of a failed upload tries its original again; overlap ≥ size is a 400', async () => {
    const pdf = readFileSync(new URL('hyphenation.pdf', FIXTURES));
    const { payload, contentType } = await multipart([
      { name: 'file', value: pdf.subarray(0, Math.floor(pdf.length / 2)), filename: 'cut.pdf' },
    ]);
    const created = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    const id = created.json().document_ids[0] as string;
    expect((await waitForVersion(id, 1)).status).toBe('failed');
    const bad = await h.request('POST', `/v1/documents/${id}/reprocess`, {
      body: { chunk_size: 128, chunk_overlap: 128 },
    });
    expect(bad.statusCode).toBe(400);
    const again = await h.request('POST', `/v1/documents/${id}/reprocess`, { body: {} });
    expect(again.statusCode).toBe(202);
    // The same bytes fail the same way, as version 2 in place of version 1.
    expect(await waitForVersion(id, 2)).toMatchObject({
      status: 'failed',
      version: 2,
      error: { code: 'corrupt' },
    });
    expect((await h.request('GET', `/v1/documents/${id}/file`)).rawPayload.length).toBe(
      Math.floor(pdf.length / 2),
    );
  });

  it('Idempotency-Key on PUT content replays the first 202 and refuses another body with it', async () => {
    const [id] = await h.ingest(h.orgA, ['idempotent original']);
    await h.waitForDone(h.orgA, [id!]);
    const headers = { 'idempotency-key': `put-${id}` };
    const first = await putText(id!, 'idempotent second', headers);
    const again = await putText(id!, 'idempotent second', headers);
    expect(first.statusCode).toBe(202);
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await putText(id!, 'another body', headers)).statusCode).toBe(422);
    const doc = await waitForVersion(id!, 2);
    expect(doc.version).toBe(2);
    const reprocessKey = { 'idempotency-key': `reprocess-${id}` };
    const r1 = await h.request('POST', `/v1/documents/${id}/reprocess`, { body: {}, headers: reprocessKey });
    const r2 = await h.request('POST', `/v1/documents/${id}/reprocess`, { body: {}, headers: reprocessKey });
    expect(r1.json()).toMatchObject({ version: 3 });
    expect(r2.json()).toEqual(r1.json());
  });

  it('refuses a body that is neither text nor url', async () => {
    const [id] = await h.ingest(h.orgA, ['body checks']);
    for (const body of [{}, { text: 'a', url: 'https://example.com/' }, { text: '' }, { txt: 'a' }]) {
      const res = await h.request('PUT', `/v1/documents/${id}/content`, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('invalid_request');
    }
  });
});

describe('KEEP_ORIGINALS=false', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { KEEP_ORIGINALS: 'false' } });
  });
  afterAll(() => h.close());

  it('deletes an original once indexed: /file answers 410 and reprocess 409, saying why', async () => {
    const { payload, contentType } = await multipart([
      { name: 'file', value: Buffer.from('Fulmars glide over the waves.'), filename: 'fulmars.txt' },
    ]);
    const created = await h.request('POST', '/v1/ingest/file', {
      payload,
      headers: { 'content-type': contentType },
    });
    const id = created.json().document_ids[0] as string;
    const [doc] = await h.waitForDone(h.orgA, [id]);
    expect(doc).toMatchObject({ status: 'ready', source: { type: 'file', filename: 'fulmars.txt' } });
    // The worker deletes it right after the version turns ready.
    for (let i = 0; i < 200 && (await h.blobFiles()).length > 0; i++)
      await new Promise((r) => setTimeout(r, 25));
    expect(await h.blobFiles()).toEqual([]);
    const file = await h.request('GET', `/v1/documents/${id}/file`);
    expect(file.statusCode).toBe(410);
    expect(file.json()).toMatchObject({ code: 'original_not_kept' });
    expect(file.json().detail).toContain('KEEP_ORIGINALS=false');
    expect((await h.request('GET', `/v1/documents/${id}/content`)).body).toBe(
      'Fulmars glide over the waves.',
    );
    const reprocess = await h.request('POST', `/v1/documents/${id}/reprocess`, { body: {} });
    expect(reprocess.statusCode).toBe(409);
    expect(reprocess.json()).toMatchObject({ code: 'cannot_reprocess' });
    expect(reprocess.json().detail).toContain('KEEP_ORIGINALS=false');
    // A text document re-chunks from its chunks' text: no original needed.
    const [text] = await h.ingest(h.orgA, ['Shearwaters skim the sea.']);
    await h.waitForDone(h.orgA, [text!]);
    expect((await h.request('POST', `/v1/documents/${text}/reprocess`, { body: {} })).statusCode).toBe(202);
  });
});
