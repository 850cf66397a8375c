// The chunks of one text as a pool thread reports them, handed on to whoever reads the stream
// (the document store, which writes them as they come; a reader that lets go before the end,
// say for a deleted document, stops the job). Batches wait here only until read; reading past the
// last one ends when the job does, with its totals or its error.
import type { ChunkRow, ChunkStream, IndexTotals } from '../../domain/types.js';

export class ChunkQueue {
  private readonly waiting: { batch: readonly ChunkRow[]; onRead: () => void }[] = [];
  private wake: (() => void) | null = null;
  private outcome: { totals: IndexTotals } | { error: unknown } | null = null;

  /** `stop` ends the job when the reader lets go of the stream before its end. */
  constructor(private readonly stop: (reason: Error) => void) {}

  /** The job's end: its totals, or its error once the batches before it have been read. */
  follow(done: Promise<IndexTotals>): void {
    done.then(
      (totals) => this.finish({ totals }),
      (error: unknown) => this.finish({ error }),
    );
  }

  /** Queues a batch; `onRead` is told when the reader takes it. */
  push(batch: readonly ChunkRow[], onRead: () => void): void {
    this.waiting.push({ batch, onRead });
    this.wakeReader();
  }

  stream(): ChunkStream {
    const chunks: AsyncIterable<readonly ChunkRow[]> = {
      [Symbol.asyncIterator]: () => ({
        next: () => this.next(),
        return: async () => {
          this.stop(new Error('the chunks are no longer wanted'));
          this.waiting.length = 0;
          return { done: true, value: undefined };
        },
      }),
    };
    return {
      chunks,
      totals: () => {
        if (this.outcome && 'totals' in this.outcome) return this.outcome.totals;
        throw new Error('the totals are known only once every chunk has been read');
      },
    };
  }

  private async next(): Promise<IteratorResult<readonly ChunkRow[]>> {
    for (;;) {
      const next = this.waiting.shift();
      if (next) {
        next.onRead();
        return { done: false, value: next.batch };
      }
      if (this.outcome) {
        if ('error' in this.outcome) throw this.outcome.error;
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private finish(outcome: { totals: IndexTotals } | { error: unknown }): void {
    this.outcome ??= outcome;
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
