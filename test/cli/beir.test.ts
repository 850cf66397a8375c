// The BEIR folder reader that `docindex eval` and the BEIR benchmark share, on a three-document
// collection in test/fixtures/beir-tiny: what each of them takes from it, and what it refuses.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBeir } from '../../bench/beir.js';
import { readBeirCorpus, readBeirQueries } from '../../src/cli/beir.js';
import { readEvaluationQueries } from '../../src/cli/client-commands/eval.js';

const TINY = fileURLToPath(new URL('../fixtures/beir-tiny', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'docindex-beir-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('BEIR folder reader', () => {
  it('reads the judged queries in order, with their grades; a query without qrels is left out', async () => {
    expect(await readBeirQueries(TINY)).toEqual([
      {
        id: 'q1',
        text: 'vitamin D bones',
        judgements: [
          { corpusId: 'd1', grade: 2 },
          { corpusId: 'd3', grade: 0 },
        ],
      },
      { id: 'q2', text: 'arctic tern migration', judgements: [{ corpusId: 'd2', grade: 1 }] },
      { id: 'q4', text: 'only judged not relevant', judgements: [{ corpusId: 'd3', grade: 0 }] },
    ]);
  });

  it('reads the corpus, a missing title as empty', async () => {
    expect(await readBeirCorpus(TINY)).toEqual([
      { id: 'd1', title: 'Vitamin D', text: 'Vitamin D keeps bones strong.' },
      { id: 'd2', title: '', text: 'Arctic terns migrate from pole to pole.' },
      { id: 'd3', title: 'Currents', text: 'Ocean currents move heat.' },
    ]);
  });

  it('gives docindex eval the API’s queries, corpus ids as external ids', async () => {
    const queries = await readEvaluationQueries(TINY);
    expect(queries.map((q) => q.query)).toEqual([
      'vitamin D bones',
      'arctic tern migration',
      'only judged not relevant',
    ]);
    expect(queries[0]!.relevant).toEqual([
      { external_id: 'd1', grade: 2 },
      { external_id: 'd3', grade: 0 },
    ]);
  });

  it('gives the benchmark the queries with a relevant document and their relevant sets', async () => {
    const set = await loadBeir('tiny', TINY);
    expect(set.queries.map((q) => q.id)).toEqual(['q1', 'q2']);
    expect(set.relevant).toEqual(
      new Map([
        ['q1', new Set(['d1'])],
        ['q2', new Set(['d2'])],
      ]),
    );
    expect(set.documents.map((d) => d.id)).toEqual(['d1', 'd2', 'd3']);
  });

  it('refuses a folder that is not BEIR and a score that is not a whole number, naming the line', async () => {
    await expect(readBeirQueries(scratch)).rejects.toThrow(/is not a BEIR folder/);
    const bad = path.join(scratch, 'bad');
    mkdirSync(path.join(bad, 'qrels'), { recursive: true });
    writeFileSync(path.join(bad, 'queries.jsonl'), '{"_id": "q1", "text": "t"}\n');
    writeFileSync(path.join(bad, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nq1\td1\t0.5\n');
    await expect(readBeirQueries(bad)).rejects.toThrow(/test\.tsv, line 2: the score must be a whole number/);
    writeFileSync(path.join(bad, 'qrels', 'test.tsv'), 'q1\td1\t1\n');
    writeFileSync(path.join(bad, 'queries.jsonl'), '{"_id": "q1", "text": "t"}\nnot json\n');
    await expect(readBeirQueries(bad)).rejects.toThrow(/queries\.jsonl, line 2: not JSON/);
    await expect(readBeirCorpus(bad)).rejects.toThrow(/has no corpus\.jsonl/);
  });
});
