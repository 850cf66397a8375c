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

/**
 * The ids (column `id`) of org `orgParam`'s documents that pass `filter`, read from the
 * document_metadata table (migrations.ts, version 70) rather than each document's jsonb: every
 * leaf is an index range over (org_id, key, value), $and/$or are INTERSECT/UNION of their parts,
 * and a negation is the org's documents EXCEPT its operand. It selects exactly what
 * postgresFilter accepts, whatever the documents' state; the caller adds the status tests.
 */
export function postgresFilterDocuments(
  filter: Filter,
  orgParam: string,
  tables: { documents: string; metadata: string },
  param: (value: unknown) => string,
): string {
  const all = `SELECT id FROM ${tables.documents} WHERE org_id = ${orgParam}`;
  const entries = (key: string, test: string) =>
    `SELECT document_id AS id FROM ${tables.metadata} WHERE org_id = ${orgParam} AND key = ${param(cleanText(key))}::text${test}`;
  // Every operand is a sub-select of its own, so compounds nest in any order.
  const not = (operand: string) => `${all} EXCEPT SELECT id FROM (${operand}) AS n`;
  const build = (f: Filter): string => {
    switch (f.kind) {
      case 'and':
      case 'or': {
        if (f.filters.length === 0) return f.kind === 'and' ? all : `SELECT NULL::text AS id WHERE false`;
        const [first, ...rest] = f.filters;
        if (rest.length === 0 && first) return build(first);
        return f.filters
          .map((part) => `SELECT id FROM (${build(part)}) AS p`)
          .join(f.kind === 'and' ? ' INTERSECT ' : ' UNION ');
      }
      case 'not':
        return not(build(f.filter));
      case 'exists':
        return f.exists ? entries(f.key, '') : not(entries(f.key, ''));
      case 'compare': {
        const op = f.op === '$ne' ? '=' : COMPARE_SQL[f.op];
        const leaf = entries(f.key, ` AND value ${op} ${param(cleanText(f.value))}::text`);
        return f.op === '$ne' ? not(leaf) : leaf;
      }
      case 'list': {
        const leaf = entries(f.key, ` AND value = ANY(${param(f.values.map(cleanText))}::text[])`);
        return f.op === '$nin' ? not(leaf) : leaf;
      }
    }
  };
  return build(filter);
}

/**
 * The access-list condition on the document column `access` (text[], or NULL for none): the
 * document has no list, or its list overlaps `principals` (none: no list only).
 */
export function postgresAccessCondition(
  access: string,
  principals: readonly string[],
  param: (value: unknown) => string,
): string {
  if (principals.length === 0) return `${access} IS NULL`;
  return `(${access} IS NULL OR ${access} && ${param(principals.map((p) => cleanText(p)))}::text[])`;
}
