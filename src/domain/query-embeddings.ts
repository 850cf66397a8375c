// Query vectors, cached: users repeat queries (paging, retries, dashboards), and each embedding
// call costs a provider round trip or a model run. The cache is per process and bounded (least
// recently used out first); concurrent asks for the same text share one provider call; a failed
// call is not cached. Keyed by the text as sent: the model sees case and spacing, so they count.
import type { Embedder } from './ports.js';

export class QueryEmbeddings {
  private readonly entries = new Map<string, Promise<Float32Array>>();

  constructor(
    private readonly embedder: Embedder,
    private readonly capacity = 1_000,
  ) {}

  /** The query's vector, from the cache when it was asked before. */
  async vectorFor(query: string, signal?: AbortSignal): Promise<Float32Array> {
    const cached = this.entries.get(query);
    if (cached) {
      // Re-inserted: a Map iterates in insertion order, so the first key is the least recent.
      this.entries.delete(query);
      this.entries.set(query, cached);
      return cached;
    }
    const pending = this.embedder.embed([query], signal ? { signal } : {}).then((vectors) => {
      const vector = vectors[0];
      if (!vector) throw new Error('the embedder answered no vector');
      return vector;
    });
    this.entries.set(query, pending);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    pending.catch(() => {
      if (this.entries.get(query) === pending) this.entries.delete(query);
    });
    return pending;
  }
}
