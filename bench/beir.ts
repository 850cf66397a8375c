// BEIR test collections (../shared/benchmarks/beir/) and how systems are scored on them: nDCG@10
// with binary gains and a log2(rank + 1) discount, and Recall@100, each averaged over the queries
// that have judgements, from a ranked list of document ids per query (a chunk-level result list
// keeps each document's first hit). The arithmetic is the service's own (src/domain/retrieval-metrics.ts,
// what POST /v1/evaluations reports), with every relevant document at grade 1.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readBeirCorpus, readBeirQueries } from '../src/cli/beir.js';
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

/** The collection in `folder` (read by the CLI's BEIR reader), its relevant documents those graded above 0. */
export async function loadBeir(name: string, folder: string): Promise<BeirSet> {
  const [judged, documents] = await Promise.all([readBeirQueries(folder), readBeirCorpus(folder)]);
  const relevant = new Map<string, Set<string>>();
  const queries: BeirSet['queries'] = [];
  for (const q of judged) {
    const ids = new Set(q.judgements.filter((j) => j.grade > 0).map((j) => j.corpusId));
    if (ids.size === 0) continue;
    relevant.set(q.id, ids);
    queries.push({ id: q.id, text: q.text });
  }
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
