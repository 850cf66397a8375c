// A plain in-memory BM25 index, the kind a user writes next to LangChain.js when they want keyword
// search without a server: an inverted index (term → postings of [document, term frequency]) and
// Okapi BM25 scoring (k1 = 1.2, b = 0.75) at query time. No persistence, no tenants, no deletes.

const K1 = 1.2;
const B = 0.75;
const WORD = /[\p{L}\p{N}]+/gu;

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

export interface Bm25Hit {
  id: number;
  text: string;
  score: number;
}

export class Bm25Index {
  /** term → flat postings: document number, term frequency, document number, … */
  private readonly postings = new Map<string, number[]>();
  private readonly lengths: number[] = [];
  private readonly texts: string[] = [];
  private totalLength = 0;

  get size(): number {
    return this.texts.length;
  }

  get terms(): number {
    return this.postings.size;
  }

  add(text: string): number {
    const id = this.texts.length;
    const words = wordsOf(text);
    const frequencies = new Map<string, number>();
    for (const w of words) frequencies.set(w, (frequencies.get(w) ?? 0) + 1);
    for (const [term, tf] of frequencies) {
      let list = this.postings.get(term);
      if (!list) {
        list = [];
        this.postings.set(term, list);
      }
      list.push(id, tf);
    }
    this.texts.push(text);
    this.lengths.push(words.length);
    this.totalLength += words.length;
    return id;
  }

  search(query: string, topK: number): Bm25Hit[] {
    const n = this.texts.length;
    if (n === 0) return [];
    const averageLength = this.totalLength / n;
    const scores = new Map<number, number>();
    for (const term of new Set(wordsOf(query))) {
      const list = this.postings.get(term);
      if (!list) continue;
      const df = list.length / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < list.length; i += 2) {
        const doc = list[i]!;
        const tf = list[i + 1]!;
        const norm = tf + K1 * (1 - B + (B * this.lengths[doc]!) / averageLength);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * (tf * (K1 + 1))) / norm);
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, topK)
      .map(([id, score]) => ({ id, text: this.texts[id]!, score }));
  }
}
