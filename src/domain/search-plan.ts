// The search planner every keyword index shares: which of a query's terms to rank with, so one
// query ranks at most the row budget of matching chunks (the idea of Elasticsearch's
// cutoff_frequency). Each index counts its own terms (capped at budget + 1) and builds its own
// query syntax from the plan; the choice is made here once.

/** A query term and how many of the org's chunks hold it (counted up to the budget + 1). */
export interface TermCount<T> {
  term: T;
  rows: number;
}

export interface TermPlan<T> {
  /** The terms to rank with: rarest first while their matches fit the budget (at least one). */
  chosen: T[];
  /** Every term that matches anything, rarest first. */
  every: T[];
  /** Matches of the chosen terms together (over the budget when the rarest alone is). */
  rows: number;
  /** Whether `chosen` is every matching term with every match within the budget. */
  exact: boolean;
}

/**
 * Terms are taken rarest first while their matches fit the budget; a term too common to fit is
 * dropped: in a large org it would cost most of the query's time and, being that common, barely
 * moves BM25 scores. A query whose rarest term alone exceeds the budget (only very common words)
 * keeps that one term; the index then ranks a bounded subset of its matches. null when no term
 * matches anything.
 */
export function planTerms<T>(counts: readonly TermCount<T>[], budget: number): TermPlan<T> | null {
  const counted = counts.filter((c) => c.rows > 0).sort((a, b) => a.rows - b.rows);
  const first = counted[0];
  if (!first) return null;
  const chosen = [first.term];
  let rows = first.rows;
  for (const c of counted.slice(1)) {
    if (rows + c.rows > budget) break;
    chosen.push(c.term);
    rows += c.rows;
  }
  return {
    chosen,
    every: counted.map((c) => c.term),
    rows,
    exact: rows <= budget && chosen.length === counted.length,
  };
}

/**
 * The MAX rarest terms of a long query, from counts capped low (a few thousand terms cost
 * milliseconds to count that way): terms that match nothing are dropped, ties keep query order.
 */
export function rarestTerms<T>(counts: readonly TermCount<T>[], max: number): T[] {
  return counts
    .map((c, position) => ({ ...c, position }))
    .filter((c) => c.rows > 0)
    .sort((a, b) => a.rows - b.rows || a.position - b.position)
    .slice(0, max)
    .map((c) => c.term);
}

/**
 * Which terms held more matches than the row budget, remembered for a while (per org: the keys
 * name the org). Counting such a term reads a budget's worth of postings on every query, and the
 * common words of natural-language queries are exactly these; a term that was over the budget a
 * minute ago still is, or nearly (only deleting most of an org brings it under), and the plan
 * treats a term over the budget the same whatever its exact count. Only "over" is remembered:
 * a term that matched nothing or few chunks is counted again, so new documents are found at once.
 */
export class OverBudgetTerms {
  private readonly until = new Map<string, number>();

  /** ttlMs 0 remembers nothing. */
  constructor(
    private readonly ttlMs = 60_000,
    private readonly max = 100_000,
  ) {}

  has(key: string, now = Date.now()): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(key);
    return false;
  }

  add(key: string, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    if (this.until.size >= this.max) this.until.clear();
    this.until.set(key, now + this.ttlMs);
  }
}
