// `docindex eval` against a real server on 127.0.0.1: a BEIR-shaped folder built here, a JSONL
// file, the run flags and the tables; and, when ../shared has SciFact, the command's nDCG@10 on a
// slice of it equals the benchmark's arithmetic on the rankings POST /v1/query gives.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstHits, loadBeir, ndcgAt } from '../../bench/beir.js';
import { parseRun } from '../../src/cli/client-commands/eval.js';
import { runClientCommand } from '../../src/cli/client-commands.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { SHARED_DIR } from '../helpers/shared-dir.js';

function terminal() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = (stream: PassThrough) => () => (stream.read() ?? '').toString();
  return { io: { stdout, stderr }, out: text(stdout), err: text(stderr) };
}

const CORPUS = [
  { _id: 'c1', text: 'Vitamin D deficiency is linked to weaker bones in older adults.' },
  { _id: 'c2', text: 'Regular exercise strengthens bones and muscles.' },
  { _id: 'c3', text: 'The migration of arctic terns spans both poles.' },
  { _id: 'c4', text: 'Sea ice loss changes the routes of migrating birds.' },
];

describe('docindex eval', () => {
  let h: Harness;
  let baseUrl: string;
  let dir: string;

  beforeAll(async () => {
    h = await startHarness();
    const res = await h.request('POST', '/v1/ingest', {
      body: { documents: CORPUS.map((d) => ({ text: d.text, external_id: d._id })) },
    });
    await h.waitForDone(h.orgA, res.json().document_ids);
    baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
    dir = mkdtempSync(path.join(tmpdir(), 'docindex-eval-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await h.close();
  });

  const run = async (args: string[]) => {
    const t = terminal();
    const code = await runClientCommand(
      'eval',
      [...args, '--url', baseUrl, '--api-key', h.orgA.apiKey],
      {},
      t.io,
    );
    return { code, out: t.out(), err: t.err() };
  };

  it('evaluates a BEIR folder: one row per run, and per-query rows', async () => {
    const folder = path.join(dir, 'beir');
    mkdirSync(path.join(folder, 'qrels'), { recursive: true });
    writeFileSync(
      path.join(folder, 'queries.jsonl'),
      `${[
        { _id: 'q1', text: 'vitamin D bones' },
        { _id: 'q2', text: 'arctic tern migration' },
        { _id: 'q3', text: 'a query without judgements' },
        { _id: 'q4', text: 'ocean currents' },
      ]
        .map((q) => JSON.stringify(q))
        .join('\n')}\n`,
    );
    writeFileSync(
      path.join(folder, 'qrels', 'test.tsv'),
      'query-id\tcorpus-id\tscore\nq1\tc1\t2\nq1\tc2\t1\nq2\tc3\t1\nq4\tmissing-doc\t1\n',
    );
    const { code, out } = await run([
      folder,
      '--per-query',
      '--run',
      'mode=keyword,rerank=false',
      '--run',
      'mode=keyword',
      '--top-k',
      '5',
    ]);
    expect(code).toBe(0);
    const lines: string[] = out.split('\n');
    expect(lines[0]).toMatch(
      /^evaluation eval_[0-9a-f]{32}: done, 3 queries, 2 evaluated \(1 without a known relevant document\)$/,
    );
    const header = lines.find((l) => l.startsWith('RUN'))!;
    expect(header.split(/\s{2,}/)).toEqual([
      'RUN',
      'MODE',
      'RERANK',
      'WEIGHT',
      'nDCG@10',
      'RECALL@5',
      'MRR@10',
      'P50 ms',
      'P95 ms',
      'DEGRADED',
    ]);
    const start = lines.indexOf(header) + 1;
    const runRows = lines.slice(start, lines.indexOf('', start)).map((l) => l.split(/\s{2,}/));
    expect(runRows).toHaveLength(2);
    for (const row of runRows)
      expect(row.slice(1, 7)).toEqual(['keyword', 'no', '-', '1.0000', '1.0000', '1.0000']);
    const perQuery = lines.slice(lines.findIndex((l) => l.startsWith('#'))).filter((l) => /^\d/.test(l));
    expect(perQuery.map((l) => l.split(/\s{2,}/))).toEqual([
      ['1', 'vitamin D bones', '1.0000', '1.0000', 'c1:1 c2:2'],
      ['2', 'arctic tern migration', '1.0000', '1.0000', 'c3:1'],
      ['3', 'ocean currents', '-', '-', 'not evaluated; unknown: missing-doc'],
    ]);
  });

  it('evaluates a JSONL file of the API query objects and prints the API body with --json', async () => {
    const file = path.join(dir, 'queries.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ query: 'sea ice birds', relevant: [{ external_id: 'c4' }] })}\n${JSON.stringify({
        query: 'exercise',
        relevant: [{ external_id: 'c3' }],
      })}\n`,
    );
    const { code, out } = await run([file, '--json', '--name', 'from a file']);
    expect(code).toBe(0);
    const body = JSON.parse(out);
    expect(body).toMatchObject({ name: 'from a file', status: 'done', query_count: 2, queries_evaluated: 2 });
    // The first query finds c4 first; the second never finds c3.
    expect(body.runs[0]).toMatchObject({
      mode: 'keyword',
      ndcg_at_10: 0.5,
      recall_at_k: 0.5,
      mrr_at_10: 0.5,
    });
    const fetched = await h.request('GET', `/v1/evaluations/${body.id}`);
    expect(fetched.json()).toEqual(body);
  });

  it('refuses a bad --run, a missing file and a folder that is not BEIR, with exit code 2', async () => {
    expect(() => parseRun('mode=fast')).toThrow(/keyword, semantic or hybrid/);
    expect(() => parseRun('rerank=maybe')).toThrow(/true or false/);
    expect(() => parseRun('semantic_weight=2')).toThrow(/0 to 1/);
    expect(() => parseRun('colour=blue')).toThrow(/mode=/);
    expect(parseRun('mode=hybrid,rerank=false,semantic_weight=0.7')).toEqual({
      mode: 'hybrid',
      rerank: false,
      semantic_weight: 0.7,
    });
    const bad = await run([path.join(dir, 'queries.jsonl'), '--run', 'mode=fast']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--run mode must be keyword, semantic or hybrid/);
    const missing = await run([path.join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/no such file or folder/);
    const empty = path.join(dir, 'empty-folder');
    mkdirSync(empty, { recursive: true });
    const notBeir = await run([empty]);
    expect(notBeir.code).toBe(2);
    expect(notBeir.err).toMatch(/not a BEIR folder/);
  });

  it('shows a server refusal (a semantic run without embeddings) as the API error', async () => {
    const { code, err } = await run([path.join(dir, 'queries.jsonl'), '--run', 'mode=semantic']);
    expect(code).toBe(1);
    expect(err).toMatch(/semantic_search_unavailable|semantic search/i);
  });
});

const scifactDir = path.join(SHARED_DIR, 'benchmarks', 'beir', 'scifact');
const scifact = existsSync(path.join(scifactDir, 'corpus.jsonl')) ? scifactDir : null;
if (!scifact) console.warn(`skipping the SciFact evaluation test: ${scifactDir} is not beside this clone`);

describe.skipIf(!scifact)('docindex eval on SciFact', () => {
  it('reports the nDCG@10 the benchmark computes from the same rankings', async () => {
    const set = await loadBeir('scifact', scifact!);
    const queries = set.queries.slice(0, 20);
    const judged = new Set(queries.flatMap((q) => [...set.relevant.get(q.id)!]));
    // The judged documents of those queries and 300 others: enough to rank among, quick to index.
    const documents = [
      ...set.documents.filter((d) => judged.has(d.id)),
      ...set.documents.filter((d) => !judged.has(d.id)).slice(0, 300),
    ];
    const h = await startHarness();
    try {
      const ids: string[] = [];
      for (let i = 0; i < documents.length; i += 50) {
        const res = await h.request('POST', '/v1/ingest', {
          body: {
            documents: documents
              .slice(i, i + 50)
              .map((d) => ({ text: `${d.title}\n\n${d.text}`, external_id: d.id })),
          },
        });
        expect(res.statusCode).toBe(202);
        ids.push(...res.json().document_ids);
      }
      await h.waitForDone(h.orgA, ids, 120_000);
      const byDocumentId = new Map(ids.map((id, i) => [id, documents[i]!.id]));
      const baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
      const t = terminal();
      const code = await runClientCommand(
        'eval',
        [
          scifact!,
          '--limit',
          '20',
          '--json',
          '--run',
          'mode=keyword',
          '--url',
          baseUrl,
          '--api-key',
          h.orgA.apiKey,
        ],
        {},
        t.io,
      );
      expect(code, t.err()).toBe(0);
      const body = JSON.parse(t.out());
      let expected = 0;
      for (const q of queries) {
        const res = await h.request('POST', '/v1/query', {
          body: { query: q.text, top_k: 10, mode: 'keyword', max_chunks_per_document: 1 },
        });
        const ranking = firstHits(
          res.json().results.map((r: { document_id: string }) => byDocumentId.get(r.document_id)!),
        );
        expected += ndcgAt(10, ranking, set.relevant.get(q.id)!);
      }
      expect(body.queries_evaluated).toBe(20);
      expect(body.runs[0].ndcg_at_10).toBeCloseTo(expected / queries.length, 4);
      expect(body.runs[0].ndcg_at_10).toBeGreaterThan(0);
    } finally {
      await h.close();
    }
  });
});
