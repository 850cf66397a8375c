// One organisation's share of a process's PostgreSQL pool: at most `max` connections held at once
// by requests of one org, so a tenant whose requests wait on the database (a long lock, a slow
// statement) cannot take every connection and make the others' requests fail. Requests over the
// share wait their turn, first come first served, for up to `waitMs`, then fail `overloaded`.
import { ERRORS } from '../../domain/errors.js';

interface Share {
  held: number;
  waiting: Array<() => void>;
}

export class OrgConnectionShare {
  private readonly shares = new Map<string, Share>();

  constructor(
    private readonly max: number,
    private readonly waitMs: number,
  ) {
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`an org's connection share must be at least 1: ${max}`);
  }

  /** Resolves once `orgId` may take a connection; call the returned function when it is released. */
  async enter(orgId: string): Promise<() => void> {
    let share = this.shares.get(orgId);
    if (!share) {
      share = { held: 0, waiting: [] };
      this.shares.set(orgId, share);
    }
    const release = this.releaser(orgId, share);
    if (share.held < this.max) {
      share.held += 1;
      return release;
    }
    const waiting = share.waiting;
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = waiting.indexOf(turn);
        if (at >= 0) waiting.splice(at, 1);
        reject(ERRORS.databaseShareBusy());
      }, this.waitMs);
      waiting.push(turn);
    });
    // Handed over by a release: `held` already counts this one.
    return release;
  }

  /** Connections the org holds now (for tests and metrics). */
  held(orgId: string): number {
    return this.shares.get(orgId)?.held ?? 0;
  }

  private releaser(orgId: string, share: Share): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = share.waiting.shift();
      if (next) {
        next();
        return;
      }
      share.held -= 1;
      if (share.held === 0) this.shares.delete(orgId);
    };
  }
}
