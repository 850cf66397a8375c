// Partitions over HTTP, on whichever backend the harness runs: a key limited to partitions sees
// nothing else on any route that returns or changes a document (the leak matrix: limited or not ×
// document in or out of its partitions), ingests only into its own, and cannot widen a request's
// partitions; GET and DELETE /v1/partitions; the partition on every ingest form and status record.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../client/support.js';
import { type Harness, startHarness, type TestOrg } from '../helpers/harness.js';
import { multipart } from '../helpers/multipart.js';

describe('partitions', () => {
  let h: Harness;
  /** A key of org A limited to the partition `red`. */
  let limited: TestOrg;
  /** org A's first key: every partition. */
  let full: TestOrg;

  async function upload(key: string, text: string, partition: string): Promise<string> {
    const form = await multipart([
      { name: 'file', value: Buffer.from(text), filename: 'note.txt' },
      { name: 'partition', value: partition },
    ]);
    const res = await h.request('POST', '/v1/ingest/file', {
      key,
      payload: form.payload,
      headers: { 'content-type': form.contentType },
    });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().document_ids[0] as string;
  }

  const problem = (res: LightMyRequestResponse) =>
    res.json() as { code: string; status: number; detail: string };

  beforeAll(async () => {
    h = await startHarness();
    full = h.orgA;
    const issued = await h.runtime.admin.issueKey(h.orgA.orgId, { partitions: ['red'] });
    expect(issued.partitions).toEqual(['red']);
    limited = { orgId: h.orgA.orgId, keyId: issued.key_id, apiKey: issued.api_key };
  });
  afterAll(async () => {
    await h.close();
  });

  describe('the leak matrix', () => {
    let inside: string;
    let outside: string;

    beforeAll(async () => {
      inside = await upload(full.apiKey, 'The red panda naps in the bamboo.', 'red');
      outside = await upload(full.apiKey, 'The blue whale hums across the bamboo ocean.', 'blue');
      await h.waitForDone(full, [inside, outside]);
    });

    /** Whether `key` may see `doc`: every key sees `inside`; only the full key sees `outside`. */
    const visible = (key: TestOrg, doc: string) => key === full || doc === inside;
    const cells = () =>
      [
        ['limited', limited, inside],
        ['limited', limited, outside],
        ['full', full, inside],
        ['full', full, outside],
      ] as const;

    it('shows the partition in the status record', async () => {
      const res = await h.request('GET', `/v1/documents/${outside}`, { key: full.apiKey });
      expect(res.json()).toMatchObject({ id: outside, partition: 'blue', status: 'ready' });
    });

    it('reads: status, list, chunks, content and file are 404 or absent outside the key’s partitions', async () => {
      for (const [who, key, doc] of cells()) {
        const label = `${who} key, ${doc === inside ? 'inside' : 'outside'}`;
        const reads = [
          `/v1/documents/${doc}`,
          `/v1/documents/${doc}/chunks`,
          `/v1/documents/${doc}/content`,
          `/v1/documents/${doc}/file`,
        ];
        for (const url of reads) {
          const res = await h.request('GET', url, { key: key.apiKey });
          if (visible(key, doc)) expect(res.statusCode, `${label}: ${url}`).toBe(200);
          else {
            expect(res.statusCode, `${label}: ${url}`).toBe(404);
            // The same answer as for an id that does not exist at all.
            expect(problem(res).detail).toBe(`No document with id ${doc}.`);
          }
        }
        const listed = await h.request('GET', `/v1/documents?ids=${doc}`, { key: key.apiKey });
        expect(
          (listed.json().documents as { id: string }[]).map((d) => d.id),
          label,
        ).toEqual(visible(key, doc) ? [doc] : []);
      }
      const all = await h.request('GET', '/v1/documents', { key: limited.apiKey });
      expect((all.json().documents as { id: string }[]).map((d) => d.id)).toEqual([inside]);
    });

    it('query: results never hold a document outside the key’s partitions, and keep all inside', async () => {
      for (const [who, key] of [
        ['limited', limited],
        ['full', full],
      ] as const) {
        const res = await h.request('POST', '/v1/query', {
          key: key.apiKey,
          body: { query: 'bamboo', top_k: 10 },
        });
        expect(res.statusCode).toBe(200);
        const ids = new Set((res.json().results as { document_id: string }[]).map((r) => r.document_id));
        expect([...ids].sort(), who).toEqual((key === full ? [inside, outside] : [inside]).sort());
      }
      // A full key may narrow to one partition.
      const narrowed = await h.request('POST', '/v1/query', {
        key: full.apiKey,
        body: { query: 'bamboo', partitions: ['blue'] },
      });
      expect((narrowed.json().results as { document_id: string }[]).map((r) => r.document_id)).toEqual([
        outside,
      ]);
    });

    it('a request cannot widen its key’s partitions: 403 partition_forbidden', async () => {
      const asks: [string, string, unknown][] = [
        ['POST', '/v1/query', { query: 'bamboo', partitions: ['blue'] }],
        ['GET', '/v1/documents?partitions=red,blue', undefined],
        ['POST', '/v1/documents/delete', { document_ids: [outside], partitions: ['blue'] }],
      ];
      for (const [method, url, body] of asks) {
        const res = await h.request(method as 'POST', url, {
          key: limited.apiKey,
          ...(body === undefined ? {} : { body }),
        });
        expect(res.statusCode, url).toBe(403);
        expect(problem(res).code).toBe('partition_forbidden');
      }
      const own = await h.request('GET', '/v1/documents?partitions=red', { key: limited.apiKey });
      expect((own.json().documents as { id: string }[]).map((d) => d.id)).toEqual([inside]);
    });

    it('MCP: search, get_document and list_documents see only the key’s partitions', async () => {
      const baseUrl = await listen(h.app);
      const client = new Client({ name: 'docindex-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), {
          requestInit: { headers: { authorization: `Bearer ${limited.apiKey}` } },
        }),
      );
      try {
        const call = async (name: string, args: Record<string, unknown>) =>
          (await client.callTool({ name, arguments: args })) as CallToolResult;
        const got = await call('get_document', { id: outside });
        expect(got.isError).toBe(true);
        expect(got.content[0]?.type === 'text' ? got.content[0].text : '').toContain('not_found');
        expect((await call('get_document', { id: inside })).isError ?? false).toBe(false);
        const found = (await call('search', { query: 'bamboo' })).structuredContent as {
          results: { document_id: string }[];
        };
        expect(found.results.map((r) => r.document_id)).toEqual([inside]);
        const listed = (await call('list_documents', {})).structuredContent as {
          documents: { id: string }[];
        };
        expect(listed.documents.map((d) => d.id)).toEqual([inside]);
        const widened = await call('search', { query: 'bamboo', partitions: ['blue'] });
        expect(widened.isError).toBe(true);
        // It ingests through the tools into its own partition only.
        expect((await call('ingest_text', { text: 'red note' })).isError).toBe(true);
        const added = await call('ingest_text', { text: 'red note', partition: 'red' });
        expect(added.isError ?? false).toBe(false);
        // The whole-org tools are refused, as their /v1 routes are.
        for (const [tool, args] of [
          ['run_evaluation', { queries: [{ query: 'bamboo', relevant: [{ document_id: outside }] }] }],
          ['list_sources', {}],
          ['sync_source', { id: 'src_0123456789abcdef0123456789abcdef' }],
        ] as const) {
          const refused = await call(tool, args);
          expect(refused.isError, tool).toBe(true);
          expect(refused.content[0]?.type === 'text' ? refused.content[0].text : '', tool).toContain(
            'partition_forbidden',
          );
        }
      } finally {
        await client.close();
      }
    });

    it('changes: PATCH, PUT content, reprocess and DELETE are 404 outside, and change nothing there', async () => {
      const changes = (doc: string): [string, string, unknown][] => [
        ['PATCH', `/v1/documents/${doc}`, { metadata: { seen: 'yes' } }],
        ['PUT', `/v1/documents/${doc}/content`, { text: 'The blue whale replaced.' }],
        ['POST', `/v1/documents/${doc}/reprocess`, {}],
        ['DELETE', `/v1/documents/${doc}`, undefined],
      ];
      for (const [method, url, body] of changes(outside)) {
        const res = await h.request(method as 'POST', url, {
          key: limited.apiKey,
          ...(body === undefined ? {} : { body }),
        });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
      }
      const many = await h.request('POST', '/v1/documents/delete', {
        key: limited.apiKey,
        body: { document_ids: [outside] },
      });
      expect(many.json()).toEqual({ deleted: 0, has_more: false });
      const untouched = (await h.request('GET', `/v1/documents/${outside}`, { key: full.apiKey })).json();
      expect(untouched).toMatchObject({ version: 1, metadata: {}, pending_version: null });

      // Inside, the same key may change the document.
      const patched = await h.request('PATCH', `/v1/documents/${inside}`, {
        key: limited.apiKey,
        body: { metadata: { seen: 'yes' } },
      });
      expect(patched.statusCode).toBe(200);
      const replaced = await h.request('PUT', `/v1/documents/${inside}/content`, {
        key: limited.apiKey,
        body: { text: 'The red panda replaced.' },
      });
      expect(replaced.statusCode).toBe(202);
      await h.waitForDone(full, [inside]);
      const reprocessed = await h.request('POST', `/v1/documents/${inside}/reprocess`, {
        key: limited.apiKey,
        body: {},
      });
      expect(reprocessed.statusCode).not.toBe(404);
      const kept = (await h.request('GET', `/v1/documents/${inside}`, { key: limited.apiKey })).json();
      expect(kept.partition).toBe('red');
      const deleted = await h.request('DELETE', `/v1/documents/${inside}`, { key: limited.apiKey });
      expect(deleted.statusCode).toBe(204);
      const gone = await h.request('POST', '/v1/documents/delete', {
        key: full.apiKey,
        body: { document_ids: [outside], partitions: ['blue'] },
      });
      expect(gone.json()).toEqual({ deleted: 1, has_more: false });
    });
  });

  describe('ingest', () => {
    it('a limited key ingests only into its partitions, on every form', async () => {
      const text = await h.request('POST', '/v1/ingest', {
        key: limited.apiKey,
        body: { documents: [{ text: 'x' }] },
      });
      expect(text.statusCode).toBe(403);
      expect(problem(text).code).toBe('partition_forbidden');
      const perDocument = await h.request('POST', '/v1/ingest', {
        key: limited.apiKey,
        body: { partition: 'red', documents: [{ text: 'x' }, { text: 'y', partition: 'blue' }] },
      });
      expect(problem(perDocument).code).toBe('partition_forbidden');
      const url = await h.request('POST', '/v1/ingest/url', {
        key: limited.apiKey,
        body: { url: 'https://example.com/a.txt', partition: 'blue' },
      });
      expect(problem(url).code).toBe('partition_forbidden');
      const form = await multipart([
        { name: 'file', value: Buffer.from('hello'), filename: 'a.txt' },
        { name: 'partition', value: 'blue' },
      ]);
      const file = await h.request('POST', '/v1/ingest/file', {
        key: limited.apiKey,
        payload: form.payload,
        headers: { 'content-type': form.contentType },
      });
      expect(problem(file).code).toBe('partition_forbidden');
      const ok = await h.request('POST', '/v1/ingest', {
        key: limited.apiKey,
        body: { partition: 'red', documents: [{ text: 'red one' }] },
      });
      expect(ok.statusCode).toBe(202);
    });

    it('each document in its own partition, else the request’s, else `default`', async () => {
      const res = await h.request('POST', '/v1/ingest', {
        key: full.apiKey,
        body: { partition: 'green', documents: [{ text: 'a' }, { text: 'b', partition: 'teal' }] },
      });
      const [a, b] = res.json().document_ids as string[];
      const [plain] = await h.ingest(full, ['c']);
      const partitionOf = async (id: string | undefined) =>
        (await h.request('GET', `/v1/documents/${id}`, { key: full.apiKey })).json().partition;
      expect([await partitionOf(a), await partitionOf(b), await partitionOf(plain)]).toEqual([
        'green',
        'teal',
        'default',
      ]);
    });

    it('refuses a bad partition name with a 400 pointing at it, on JSON and on the form', async () => {
      const json = await h.request('POST', '/v1/ingest', {
        key: full.apiKey,
        body: { documents: [{ text: 'x', partition: 'Bad Name' }] },
      });
      expect(json.statusCode).toBe(400);
      expect(json.json().errors[0].pointer).toBe('/documents/0/partition');
      const form = await multipart([
        { name: 'file', value: Buffer.from('hello'), filename: 'a.txt' },
        { name: 'partition', value: '-nope' },
      ]);
      const file = await h.request('POST', '/v1/ingest/file', {
        key: full.apiKey,
        payload: form.payload,
        headers: { 'content-type': form.contentType },
      });
      expect(file.statusCode).toBe(400);
      expect(file.json().errors[0].pointer).toBe('/partition');
    });

    it('an external_id of another partition is a 409 partition_mismatch, not a move', async () => {
      const first = await h.request('POST', '/v1/ingest', {
        key: full.apiKey,
        body: { partition: 'one', documents: [{ text: 'x', external_id: 'ext-1' }] },
      });
      expect(first.statusCode).toBe(202);
      const moved = await h.request('POST', '/v1/ingest', {
        key: full.apiKey,
        body: { partition: 'two', documents: [{ text: 'y', external_id: 'ext-1' }] },
      });
      expect(moved.statusCode).toBe(409);
      expect(problem(moved).code).toBe('partition_mismatch');
    });
  });

  describe('GET and DELETE /v1/partitions', () => {
    /** A harness of its own without the shared worker, so a purge runs only when the test says. */
    let d: Harness;
    /** A key of org B limited to `beta`. */
    let betaOnly: string;

    beforeAll(async () => {
      d = await startHarness({ worker: false });
      betaOnly = (await d.runtime.admin.issueKey(d.orgB.orgId, { partitions: ['beta'] })).api_key;
    });
    afterAll(async () => {
      await d.close();
    });

    it('lists the partitions the key may see, with their sizes; deletes one in the background', async () => {
      // A worker runs until the documents are ready, then stops, so the partition stays
      // `deleting` until the purge queue is consumed below.
      const worker = d.runtime.startWorker();
      const ids = await d.ingest(d.orgB, ['alpha one', 'alpha two'], { partition: 'alpha' });
      const [kept] = await d.ingest(d.orgB, ['beta one'], { partition: 'beta' });
      await d.waitForDone(d.orgB, [...ids, kept!]);
      await worker.stop();
      const listed = await d.request('GET', '/v1/partitions', { key: d.orgB.apiKey });
      expect(listed.json()).toEqual({
        partitions: [
          { name: 'alpha', documents: 2, chunks: 2, bytes: 0, status: 'active' },
          { name: 'beta', documents: 1, chunks: 1, bytes: 0, status: 'active' },
        ],
      });
      const limitedList = await d.request('GET', '/v1/partitions', { key: betaOnly });
      expect((limitedList.json().partitions as { name: string }[]).map((p) => p.name)).toEqual(['beta']);
      expect((await d.request('DELETE', '/v1/partitions/alpha', { key: betaOnly })).statusCode).toBe(404);
      expect((await d.request('DELETE', '/v1/partitions/nothing', { key: d.orgB.apiKey })).statusCode).toBe(
        404,
      );

      const accepted = await d.request('DELETE', '/v1/partitions/alpha', { key: d.orgB.apiKey });
      expect(accepted.statusCode).toBe(202);
      expect(accepted.json()).toEqual({ status: 'accepted', partition: 'alpha' });
      const deleting = await d.request('GET', '/v1/partitions', { key: d.orgB.apiKey });
      expect(deleting.json().partitions[0]).toMatchObject({ name: 'alpha', status: 'deleting' });
      const refused = await d.request('POST', '/v1/ingest', {
        key: d.orgB.apiKey,
        body: { partition: 'alpha', documents: [{ text: 'late' }] },
      });
      expect(refused.statusCode).toBe(409);
      expect(problem(refused).code).toBe('partition_deleting');

      // A worker's partition-purge queue takes the mark and empties the partition.
      const purging = d.runtime.partitionPurgeQueue.consume(d.runtime.appDeps.partitions.purgeJob, {
        concurrency: 1,
      });
      await expect
        .poll(
          async () => (await d.request('GET', '/v1/partitions', { key: d.orgB.apiKey })).json().partitions,
          {
            timeout: 10_000,
          },
        )
        .toEqual([{ name: 'beta', documents: 1, chunks: 1, bytes: 0, status: 'active' }]);
      await purging.stop();
      for (const id of ids) {
        expect((await d.request('GET', `/v1/documents/${id}`, { key: d.orgB.apiKey })).statusCode).toBe(404);
      }
      const search = await d.request('POST', '/v1/query', { key: d.orgB.apiKey, body: { query: 'alpha' } });
      expect(search.json().results).toEqual([]);
      // Emptied, the partition takes documents again.
      const again = await d.request('POST', '/v1/ingest', {
        key: d.orgB.apiKey,
        body: { partition: 'alpha', documents: [{ text: 'new' }] },
      });
      expect(again.statusCode).toBe(202);
    });
  });

  describe('GET /v1/usage by partition', () => {
    it('counts each query once, under the partitions it ran over, and limits a partition-limited key to its own', async () => {
      const org = await h.runtime.admin.createOrg('usage-by-partition');
      const key = org.api_key;
      const issued = await h.runtime.admin.issueKey(org.org_id, { partitions: ['red'] });
      const query = async (apiKey: string, partitions?: string[]) => {
        const res = await h.request('POST', '/v1/query', {
          key: apiKey,
          body: { query: 'anything', ...(partitions ? { partitions } : {}) },
        });
        expect(res.statusCode, res.body).toBe(200);
      };
      const usage = async (apiKey: string, partition?: string) =>
        h.request('GET', `/v1/usage?${partition === undefined ? 'by=partition' : `partition=${partition}`}`, {
          key: apiKey,
        });

      // No partition named yet: the report is the one an org without partitions always had, and
      // the breakdown comes only when asked for.
      await query(key);
      const plain = (await h.request('GET', '/v1/usage', { key })).json();
      expect(plain.total_queries).toBe(1);
      expect(Object.keys(plain)).toEqual([
        'org_id',
        'period_days',
        'total_queries',
        'daily',
        'rate_limit_rpm',
      ]);
      expect((await usage(key)).json().partitions).toEqual([{ partition: '(all)', total_queries: 1 }]);

      await query(key, ['red']);
      await query(key, ['red']);
      await query(key, ['blue']);
      await query(key, ['red', 'blue']);
      await query(issued.api_key); // its default: its one partition, red
      const report = (await usage(key)).json();
      expect(report.total_queries).toBe(6);
      expect(report.daily[0].count).toBe(6);
      expect(report.partitions).toEqual([
        { partition: '(all)', total_queries: 1 },
        { partition: '(several)', total_queries: 1 },
        { partition: 'blue', total_queries: 1 },
        { partition: 'red', total_queries: 3 },
      ]);

      const red = (await usage(key, 'red')).json();
      expect(red.total_queries).toBe(3);
      expect(red.daily[0].count).toBe(3);
      expect(red.partitions).toEqual([{ partition: 'red', total_queries: 3 }]);
      expect((await usage(key, 'green')).json().partitions).toEqual([
        { partition: 'green', total_queries: 0 },
      ]);

      // The limited key sees red's queries only, and no other partition.
      const own = (await usage(issued.api_key)).json();
      expect(own.total_queries).toBe(3);
      expect(own.partitions).toEqual([{ partition: 'red', total_queries: 3 }]);
      expect((await usage(issued.api_key, 'red')).json().total_queries).toBe(3);
      const forbidden = await usage(issued.api_key, 'blue');
      expect(forbidden.statusCode).toBe(403);
      expect(problem(forbidden).code).toBe('partition_forbidden');

      const bad = await usage(key, 'Not-A-Name');
      expect(bad.statusCode).toBe(400);
      expect(problem(bad).code).toBe('invalid_request');
    });
  });
});
