// The metadata filter language (domain/filter.ts) as an SQLite condition: the one compilation
// that search, list and delete-by-filter share. Keys are matched through json_each as plain
// strings, never parsed as JSON paths, so a key may hold '.', '"', '$' or '[' without changing
// what is matched. Values compare as TEXT under SQLite's BINARY collation: UTF-8 byte order,
// which is code point order, as the reference evaluator compares.
import type { Filter } from '../../domain/filter.js';
import { storableText } from './text.js';

export interface SqlCondition {
  /** A condition that is always true or false, never NULL, so NOT inverts it exactly. */
  sql: string;
  /** Its `?` parameters, in order. */
  params: string[];
}

const COMPARE_SQL = { $eq: '=', $ne: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** `filter` tested on the JSON object in column `metadata` (e.g. `d.metadata`). */
export function sqliteFilter(filter: Filter, metadata: string): SqlCondition {
  const params: string[] = [];
  const entry = (test: string) => `EXISTS (SELECT 1 FROM json_each(${metadata}) AS m WHERE m.key = ?${test})`;
  const build = (f: Filter): string => {
    switch (f.kind) {
      case 'and':
      case 'or': {
        if (f.filters.length === 0) return f.kind === 'and' ? '1' : '0';
        return `(${f.filters.map(build).join(f.kind === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'not':
        return `NOT ${build(f.filter)}`;
      case 'exists':
        params.push(storableText(f.key));
        return `${f.exists ? '' : 'NOT '}${entry('')}`;
      case 'compare':
        params.push(storableText(f.key), storableText(f.value));
        return `${f.op === '$ne' ? 'NOT ' : ''}${entry(` AND m.type = 'text' AND m.value ${COMPARE_SQL[f.op]} ?`)}`;
      case 'list':
        params.push(storableText(f.key), JSON.stringify(f.values.map(storableText)));
        return `${f.op === '$nin' ? 'NOT ' : ''}${entry(
          " AND m.type = 'text' AND m.value IN (SELECT value FROM json_each(?))",
        )}`;
    }
  };
  return { sql: build(filter), params };
}
