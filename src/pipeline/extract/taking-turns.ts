// The documents waiting for a thread, in the order they take turns between groups (orgs).

/** Groups whose last turn is remembered (their count stays small: orgs with work in flight). */
const MAX_REMEMBERED_GROUPS = 10_000;

interface Grouped {
  /** Whose document it is; null: no group, served in arrival order. */
  group: string | null;
}

export class TakingTurns<J extends Grouped> {
  private readonly waiting: J[] = [];
  /** When each group last got a thread (a count of turns). */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;

  get length(): number {
    return this.waiting.length;
  }

  /** Waits behind every other document. */
  push(job: J): void {
    this.waiting.push(job);
  }

  /** Waits in front of every other document (one a thread gave back through no fault of its own). */
  unshift(job: J): void {
    this.waiting.unshift(job);
  }

  remove(job: J): void {
    const at = this.waiting.indexOf(job);
    if (at !== -1) this.waiting.splice(at, 1);
  }

  /**
   * The waiting document whose turn it is (the list must not be empty): of the group with the
   * fewest documents in threads (`inThreads`, by group; a PDF split across threads counts once per
   * thread), then the group that got a thread least recently, the one waiting longest. One org's
   * backlog then never keeps another org's document from the next free thread.
   */
  next(inThreads: ReadonlyMap<string, number>): J {
    const rank = (job: J): [number, number] =>
      job.group === null ? [0, -1] : [inThreads.get(job.group) ?? 0, this.lastTurn.get(job.group) ?? -1];
    let best = this.waiting[0] as J;
    let [held, turn] = rank(best);
    for (const job of this.waiting) {
      const [h, t] = rank(job);
      if (h < held || (h === held && t < turn)) {
        best = job;
        held = h;
        turn = t;
      }
    }
    return best;
  }

  /** The document got a thread: it leaves the list, and its group's turn is taken. */
  take(job: J): void {
    this.remove(job);
    if (job.group === null) return;
    // Bounded: forgetting every group's turn only makes the next few picks by arrival.
    if (this.lastTurn.size >= MAX_REMEMBERED_GROUPS) this.lastTurn.clear();
    this.lastTurn.delete(job.group);
    this.lastTurn.set(job.group, this.turns++);
  }
}
