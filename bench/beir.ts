// BEIR test collections (../shared/benchmarks/beir/) and how systems are scored on them: nDCG@10
// with binary gains and a log2(rank + 1) discount, and Recall@100, each averaged over the queries
// that have judgements, from a ranked list of document ids per query (a chunk-level result list
// keeps each document's first hit). The arithmetic is the service's own (src/domain/retrieval-metrics.ts,
// what POST /v1/evaluations reports), with every relevant document at grade 1.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ndcgAt as gradedNdcgAt, recallAt as gradedRecallAt } from '../src/domain/retrieval-metrics.js';
import { projectRoot } from './lib.js';

export interface BeirSet {
  name: string;
  documents: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  /** query id → ids of the relevant documents */
  relevant: Map<string, Set<string>>;
}

/** ../shared/benchmarks/beir/<name>, or null when ../shared is not beside the project. */
export function beirFolder(name: string): string | null {
  const folder = path.join(projectRoot(), '..', 'shared', 'benchmarks', 'beir', name);
  return existsSync(path.join(folder, 'corpus.jsonl')) ? folder : null;
}

function jsonLines<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

export function loadBeir(name: string, folder: string): BeirSet {
  const relevant = new Map<string, Set<string>>();
  const lines = readFileSync(path.join(folder, 'qrels', 'test.tsv'), 'utf8')
    .split('\n')
    .slice(1);
  for (const line of lines) {
    const [query, doc, score] = line.split('\t');
    if (!query || !doc || Number(score) <= 0) continue;
    if (!relevant.has(query)) relevant.set(query, new Set());
    relevant.get(query)!.add(doc);
  }
  const documents = jsonLines<{ _id: string; title: string; text: string }>(
    path.join(folder, 'corpus.jsonl'),
  ).map((d) => ({ id: d._id, title: d.title, text: d.text }));
  const queries = jsonLines<{ _id: string; text: string }>(path.join(folder, 'queries.jsonl'))
    .filter((q) => relevant.has(q._id))
    .map((q) => ({ id: q._id, text: q.text }));
  return { name, documents, queries, relevant };
}

/** A chunk-level ranking as a document ranking: each document at the rank of its first chunk. */
export function firstHits(documentIds: readonly string[]): string[] {
  return [...new Set(documentIds)];
}

/** The judged documents as grade-1 judgements: BEIR's test qrels are read as relevant or not. */
function binary(relevant: ReadonlySet<string>): Map<string, number> {
  return new Map([...relevant].map((id) => [id, 1]));
}

export function ndcgAt(k: number, ranking: readonly string[], relevant: ReadonlySet<string>): number {
  return gradedNdcgAt(k, ranking, binary(relevant));
}

export function recallAt(k: number, ranking: readonly string[], relevant: ReadonlySet<string>): number {
  return gradedRecallAt(k, ranking, binary(relevant));
}

export interface BeirScores {
  ndcg10: number;
  recall100: number;
  queries: number;
}

/** Mean nDCG@10 and Recall@100 over the set's judged queries, given each query's ranking. */
export function score(set: BeirSet, rankings: ReadonlyMap<string, readonly string[]>): BeirScores {
  let ndcg = 0;
  let recall = 0;
  for (const q of set.queries) {
    const relevant = set.relevant.get(q.id)!;
    const ranking = rankings.get(q.id) ?? [];
    ndcg += ndcgAt(10, ranking, relevant);
    recall += recallAt(100, ranking, relevant);
  }
  const n = set.queries.length;
  return { ndcg10: ndcg / n, recall100: recall / n, queries: n };
}
