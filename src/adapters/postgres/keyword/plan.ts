// What the GIN and RUM paths of the PostgreSQL keyword search plan a query into: the words to
// rank with, and what restricts it to some of the org's documents.
import type { Filter } from '../../../domain/filter.js';
import { cleanText } from '../../../domain/text.js';

/** What restricts a search to some of the org's documents besides named ones. */
export interface DocumentRestriction {
  filter: Filter | null;
  partitions: readonly string[] | null;
  /** The principals a request acts for: documents without an access list, or sharing one. */
  principals: readonly string[] | null;
}

/** The documents a restriction lets through, few enough to rank all their chunks. */
export interface AllowedDocuments {
  ids: string[];
  /** The chunks they hold. */
  chunks: number;
}

/** The condition on a document `d` that it is in one of the partitions. */
export function partitionCondition(partitions: readonly string[], param: (value: unknown) => string): string {
  return `d.partition = ANY(${param(partitions.map((p) => cleanText(p)))}::text[])`;
}

export interface RankedTerm {
  /** The word as a quoted tsquery literal. */
  literal: string;
  /** The org's chunks that hold it (capped at the row budget + 1). */
  rows: number;
}

export interface SearchPlan {
  /** The words to rank with, rarest first (OR-ed, they are the tsquery). */
  chosen: RankedTerm[];
  /** Every word that matches anything, rarest first. */
  every: RankedTerm[];
  /** Whether `chosen` is every word, with every match within the budget. */
  exact: boolean;
}
