// The metadata filter language (domain/filter.ts) as a PostgreSQL condition: the one compilation
// that search, list and delete-by-filter share. `->>` and `?` take a key as a plain string (no
// JSON-path parsing). Ordering comparisons use COLLATE "C": byte order of the UTF-8 database,
// which is code point order, whatever the database's own collation, as the reference evaluator
// compares. Every leaf is made true or false (never NULL, as `->>` of a missing key would give),
// so NOT inverts it exactly.
import type { Filter } from '../../domain/filter.js';
import { cleanText } from '../../domain/text.js';

const COMPARE_SQL = { $eq: '=', $ne: '=', $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/**
 * `filter` tested on the jsonb object in column `metadata` (e.g. `d.metadata`); `param` adds a
 * parameter to the caller's statement and returns its placeholder (`$n`).
 */
export function postgresFilter(filter: Filter, metadata: string, param: (value: unknown) => string): string {
  const build = (f: Filter): string => {
    switch (f.kind) {
      case 'and':
      case 'or': {
        if (f.filters.length === 0) return f.kind === 'and' ? 'true' : 'false';
        return `(${f.filters.map(build).join(f.kind === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'not':
        return `NOT ${build(f.filter)}`;
      case 'exists':
        return `${f.exists ? '' : 'NOT '}(${metadata} ? ${param(cleanText(f.key))}::text)`;
      case 'compare': {
        const value = `(${metadata} ->> ${param(cleanText(f.key))}::text) COLLATE "C"`;
        const test = `COALESCE(${value} ${COMPARE_SQL[f.op]} ${param(cleanText(f.value))}::text, false)`;
        return f.op === '$ne' ? `NOT ${test}` : test;
      }
      case 'list': {
        const value = `(${metadata} ->> ${param(cleanText(f.key))}::text)`;
        const test = `COALESCE(${value} = ANY(${param(f.values.map(cleanText))}::text[]), false)`;
        return f.op === '$nin' ? `NOT ${test}` : test;
      }
    }
  };
  return build(filter);
}
