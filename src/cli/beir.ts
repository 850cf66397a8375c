// The one reader of BEIR collection folders: queries.jsonl (`{"_id", "text"}`), qrels/test.tsv
// (query-id, corpus-id, score, after a header row) and corpus.jsonl (`{"_id", "title", "text"}`).
// `docindex eval FOLDER` sends its judged queries; the benchmarks (bench/beir.ts) read the corpus
// too. A folder that is not BEIR, or a line that is not what BEIR writes, is a SetupError naming
// the file and line.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SetupError } from './exit.js';

export interface BeirJudgement {
  /** The judged document's corpus id (its `external_id` once ingested). */
  corpusId: string;
  /** The qrels score, negative ones read as 0 (not relevant). */
  grade: number;
}

export interface BeirQuery {
  id: string;
  text: string;
  /** In qrels order; at least one. */
  judgements: BeirJudgement[];
}

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

/** Parses a JSONL text: one JSON value a line, blank lines skipped. */
export function jsonLines(text: string, file: string): unknown[] {
  return text.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    try {
      return [JSON.parse(line) as unknown];
    } catch {
      throw new SetupError(`${file}, line ${i + 1}: not JSON`);
    }
  });
}

/** The folder's judged queries, in queries.jsonl order: those without qrels are left out. */
export async function readBeirQueries(folder: string): Promise<BeirQuery[]> {
  const qrelsFile = path.join(folder, 'qrels', 'test.tsv');
  const queriesFile = path.join(folder, 'queries.jsonl');
  let qrels: string;
  let queries: string;
  try {
    [qrels, queries] = await Promise.all([readFile(qrelsFile, 'utf8'), readFile(queriesFile, 'utf8')]);
  } catch {
    throw new SetupError(`${folder} is not a BEIR folder: it needs queries.jsonl and qrels/test.tsv`);
  }
  const judged = new Map<string, BeirJudgement[]>();
  for (const [i, line] of qrels.split('\n').entries()) {
    const [queryId, corpusId, score] = line.split('\t').map((s) => s.trim());
    if (!queryId || !corpusId || score === undefined) continue;
    const grade = Number(score);
    // The header row ("query-id  corpus-id  score") is no judgement.
    if (score === '' || !Number.isInteger(grade)) {
      if (i === 0) continue;
      throw new SetupError(`${qrelsFile}, line ${i + 1}: the score must be a whole number`);
    }
    const list = judged.get(queryId) ?? [];
    list.push({ corpusId, grade: Math.max(0, grade) });
    judged.set(queryId, list);
  }
  const result: BeirQuery[] = [];
  for (const entry of jsonLines(queries, queriesFile)) {
    const q = entry as { _id?: unknown; text?: unknown };
    if (typeof q._id !== 'string' || typeof q.text !== 'string') continue;
    const judgements = judged.get(q._id);
    if (judgements) result.push({ id: q._id, text: q.text, judgements });
  }
  return result;
}

/** The folder's documents (corpus.jsonl). */
export async function readBeirCorpus(folder: string): Promise<BeirDocument[]> {
  const corpusFile = path.join(folder, 'corpus.jsonl');
  let corpus: string;
  try {
    corpus = await readFile(corpusFile, 'utf8');
  } catch {
    throw new SetupError(`${folder} has no corpus.jsonl`);
  }
  return jsonLines(corpus, corpusFile).map((entry, i) => {
    const d = entry as { _id?: unknown; title?: unknown; text?: unknown };
    if (typeof d._id !== 'string' || typeof d.text !== 'string') {
      throw new SetupError(`${corpusFile}, document ${i + 1}: expected {"_id": "…", "text": "…"}`);
    }
    return { id: d._id, title: typeof d.title === 'string' ? d.title : '', text: d.text };
  });
}
