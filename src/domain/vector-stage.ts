// The second stage of a document: once it is ready (keyword-searchable), its chunks are embedded
// and their vectors stored, in the background, so an embedding provider that is slow or down
// never holds up ingest or keyword search. The stage polls its store (VectorStageStore) for due
// documents (never embedded for the active profile, or waiting out an outage) on a PollingLoop.
// A transient failure (unreachable, timeout, 429, 5xx) pauses the whole stage with a backoff that
// doubles up to 30 s and leaves the document `pending` with the error; the first success resets
// it, so vectors catch up within about half a minute of the provider coming back. A failure that
// retrying cannot fix (a refused request, a model that cannot load) marks the document `failed`;
// a process start retries those, since that is when a fixed configuration takes effect.
import { type Backoff, doubledBackoffMs } from './backoff.js';
import { PollingLoop } from './polling-loop.js';
import {
  type Clock,
  type Embedder,
  EmbeddingError,
  noopTracer,
  type Tracer,
  type VectorStageStore,
} from './ports.js';

export interface VectorStageOptions {
  /** How often to look for due documents when there was nothing to do. */
  pollMs?: number;
  /** Documents embedded together, their chunks in one embed call (the embedder batches them). */
  concurrency?: number;
  /** The first pause after a transient failure; doubles up to maxBackoffMs. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Reports each document whose vectors failed or turned ready (logging). */
  onEvent?: (event: {
    documentId: string;
    orgId: string;
    outcome: 'ready' | 'pending' | 'failed';
    error?: EmbeddingError;
  }) => void;
  /**
   * A `docindex.embed` span per batch of documents: a trace of its own, since the stage finds its
   * documents in its store rather than being handed a job.
   */
  tracer?: Tracer;
}

export class VectorStage {
  private profile: number | null = null;
  /** The pause after the last pass that met an outage; 0 while the provider answers. */
  private backoffMs = 0;
  /** Whether a pass still has to hand failed documents back to the queue (once per start). */
  private retryFailedDue = false;
  private readonly pollMs: number;
  private readonly concurrency: number;
  /** The stage's pauses after an outage: minBackoffMs doubled up to maxBackoffMs. */
  private readonly backoff: Backoff;
  private readonly loop: PollingLoop;

  constructor(
    private readonly embedder: Embedder,
    private readonly store: VectorStageStore,
    private readonly clock: Clock,
    private readonly options: VectorStageOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 2_000;
    this.concurrency = options.concurrency ?? 16;
    this.backoff = { baseMs: options.minBackoffMs ?? 1_000, maxMs: options.maxBackoffMs ?? 30_000 };
    this.loop = new PollingLoop(() => this.pass());
  }

  /**
   * The active profile's number: provider, model and the vectors' length. When the length is not
   * configured, one short text is embedded to learn it; null while that fails.
   */
  async activeProfile(): Promise<number | null> {
    if (this.profile !== null) return this.profile;
    let dimensions = this.embedder.dimensions();
    if (dimensions === null) {
      const [probe] = await this.embedder.embed(['docindex']);
      dimensions = probe?.length ?? null;
    }
    if (dimensions === null) return null;
    this.profile = await this.store.profileId({
      provider: this.embedder.provider,
      model: this.embedder.model,
      dimensions,
    });
    return this.profile;
  }

  /**
   * One pass over the due documents (up to `limit`). Resolves with what happened; a transient
   * failure ends the pass early (the provider is out: the rest would fail the same way).
   */
  async runOnce(limit = 64): Promise<{ ready: number; pending: number; failed: number }> {
    const counts = { ready: 0, pending: 0, failed: 0 };
    const profile = await this.activeProfile();
    if (profile === null) return counts;
    const due = await this.store.dueDocuments(profile, this.clock.now(), limit);
    let outage = false;
    for (let i = 0; i < due.length && !outage; i += this.concurrency) {
      const outcomes = await this.embedDocuments(profile, due.slice(i, i + this.concurrency));
      for (const outcome of outcomes) {
        if (outcome !== 'gone') counts[outcome]++;
        if (outcome === 'pending') outage = true;
      }
    }
    return counts;
  }

  /** Starts polling; a failed `retryFailed` or probe is retried by the loop. */
  start(): void {
    if (!this.loop.active()) this.retryFailedDue = true;
    this.loop.start();
  }

  /**
   * Looks for due documents now (a document just turned ready), unless an outage pause runs or a
   * pass is running: that pass goes on while documents are due, and a pass queued behind it would
   * take the event loop from ingest for a query that finds nothing.
   */
  wake(): void {
    if (this.backoffMs === 0 && !this.loop.busy()) this.loop.wake();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * Passes over the due documents while they keep finding some, then the next poll; after an
   * outage (the provider or the database), a pause longer each time, never past the cap.
   */
  private async pass(): Promise<number> {
    try {
      if (this.retryFailedDue) {
        const profile = await this.activeProfile();
        if (profile !== null) await this.store.retryFailed(profile);
        this.retryFailedDue = false;
      }
      let done: { ready: number; pending: number; failed: number };
      do {
        done = await this.runOnce();
        if (done.pending > 0) throw new OutageSeen();
        this.backoffMs = 0;
      } while (this.loop.active() && done.ready + done.failed > 0);
      return this.pollMs;
    } catch {
      this.backoffMs = doubledBackoffMs(this.backoffMs, this.backoff);
      return this.backoffMs;
    }
  }

  /**
   * Embeds a group of documents with one embed call for all their chunks (the embedder fills
   * whole batches across documents: a few large requests, not one small one per document), then
   * completes each document in its own transaction.
   */
  private embedDocuments(
    profile: number,
    docs: ReadonlyArray<{ documentId: string; orgId: string }>,
  ): Promise<Array<'ready' | 'pending' | 'failed' | 'gone'>> {
    const tracer = this.options.tracer ?? noopTracer;
    return tracer.inSpan(
      'docindex.embed',
      {
        attributes: () => ({
          'docindex.embed.provider': this.embedder.provider,
          'docindex.embed.model': this.embedder.model,
          'docindex.embed.profile': profile,
          'docindex.documents': docs.length,
          'docindex.document.ids': docs.map((d) => d.documentId),
        }),
      },
      async (span) => {
        const outcomes = await this.embedDocumentsNow(profile, docs, (chunks) =>
          span.setAttributes(() => ({ 'docindex.chunks': chunks })),
        );
        span.setAttributes(() => ({ 'docindex.embed.ready': outcomes.filter((o) => o === 'ready').length }));
        return outcomes;
      },
    );
  }

  private async embedDocumentsNow(
    profile: number,
    docs: ReadonlyArray<{ documentId: string; orgId: string }>,
    onChunks: (count: number) => void,
  ): Promise<Array<'ready' | 'pending' | 'failed' | 'gone'>> {
    const found = await Promise.all(
      docs.map(async (doc) => ({ ...doc, chunks: await this.store.chunkTexts(doc.documentId) })),
    );
    const live = found.filter((doc) => doc.chunks !== null);
    onChunks(live.reduce((sum, doc) => sum + doc.chunks!.length, 0));
    let vectors: Float32Array[];
    try {
      vectors = await this.embedder.embed(live.flatMap((doc) => doc.chunks!.map((c) => c.text)));
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error;
      const outcome = error.transient ? 'pending' : 'failed';
      const now = this.clock.now();
      const wait = doubledBackoffMs(this.backoffMs, this.backoff, error.retryAfterMs ?? 0);
      for (const doc of live) {
        await this.store.recordFailure(doc.documentId, doc.orgId, profile, {
          status: outcome,
          code: error.code,
          message: error.message,
          nextAttemptAt: new Date(now.getTime() + (outcome === 'pending' ? wait : 0)),
          now,
        });
        this.options.onEvent?.({ documentId: doc.documentId, orgId: doc.orgId, outcome, error });
      }
      return found.map((doc) => (doc.chunks === null ? 'gone' : outcome));
    }
    let next = 0;
    const outcomes = new Map<string, 'ready' | 'gone'>();
    for (const doc of live) {
      const own = doc.chunks!.map((c) => ({
        documentId: doc.documentId,
        chunkIndex: c.chunkIndex,
        vector: vectors[next++]!,
      }));
      const written = await this.store.completeDocument(
        doc.documentId,
        doc.orgId,
        profile,
        own,
        this.clock.now(),
      );
      outcomes.set(doc.documentId, written ? 'ready' : 'gone');
      if (written) this.options.onEvent?.({ documentId: doc.documentId, orgId: doc.orgId, outcome: 'ready' });
    }
    return found.map((doc) => outcomes.get(doc.documentId) ?? 'gone');
  }
}

/** A pass met a transient failure: the loop backs off. */
class OutageSeen extends Error {}
