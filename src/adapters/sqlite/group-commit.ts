// Group commit for the SQLite stores. A COMMIT, and the FTS5 index segment every transaction
// writes, cost more than the rows of one small write, so the writes requested during one turn of
// the event loop (requests whose bytes arrived together, chunk plans that came back together)
// share one transaction, run from setImmediate. Each write still succeeds or fails alone, and
// its promise settles only once its transaction has committed.
import type { Database } from './database.js';

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Row weight at which a batch is written at once instead of at the end of the turn. */
const DEFAULT_MAX_WEIGHT = 1000;

export class GroupCommit {
  private pending: PendingWrite[] = [];
  private weight = 0;
  private scheduled: NodeJS.Immediate | null = null;

  constructor(
    private readonly db: Database,
    private readonly maxWeight = DEFAULT_MAX_WEIGHT,
  ) {}

  /**
   * Runs `write` (synchronous statements only) in the next shared transaction and resolves with
   * what it returned once that transaction has committed. `weight` (about the rows it writes)
   * bounds a batch: a burst cannot pin an unbounded number of rows in memory while it waits.
   */
  run<T>(write: () => T, weight = 1): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
      this.weight += weight;
      if (this.weight >= this.maxWeight) this.flush();
      else this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Writes what is waiting and settles every promise; never throws. */
  private flush(): void {
    if (this.scheduled !== null) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    let batch = this.pending;
    this.pending = [];
    this.weight = 0;
    // No savepoints between the writes: FTS5 writes out its pending terms at every savepoint,
    // which would undo most of the saving. A write that fails instead rolls the whole transaction
    // back, and the rest are written again without it.
    while (batch.length > 0) {
      const results: unknown[] = [];
      let culprit = -1;
      let culpritError: unknown;
      try {
        this.db
          .transaction(() => {
            for (const [i, pending] of batch.entries()) {
              try {
                results.push(pending.write());
              } catch (error) {
                culprit = i;
                culpritError = error;
                throw error;
              }
            }
          })
          .immediate();
      } catch (error) {
        // BEGIN or COMMIT failed (busy, disk full, database closed), or a write failed for a reason
        // that is not its own (I/O, full disk): every write would fail the same way.
        if (culprit === -1 || !failsAlone(culpritError)) {
          for (const pending of batch) pending.reject(error);
          return;
        }
        batch[culprit]!.reject(culpritError);
        batch = batch.filter((_, i) => i !== culprit);
        continue;
      }
      for (const [i, pending] of batch.entries()) pending.resolve(results[i]);
      return;
    }
  }
}

/** A constraint violated by the write's own rows, or an exception thrown by its own code. */
function failsAlone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code !== 'string' || !code.startsWith('SQLITE_') || code.startsWith('SQLITE_CONSTRAINT');
}
