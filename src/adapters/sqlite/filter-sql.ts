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

/**
 * The ids (column `id`) of the org's documents that pass `filter`, read from the
 * document_metadata table (database.ts, version 70) rather than each document's JSON: every leaf
 * is an index range over (org_id, key, value), $and/$or are INTERSECT/UNION of their parts, and a
 * negation is the org's documents EXCEPT its operand. It selects exactly what sqliteFilter
 * accepts, in any state of the documents (holders and deleted rows included); the caller adds
 * the status tests.
 */
export function sqliteFilterDocuments(filter: Filter, orgId: string): SqlCondition {
  const params: string[] = [];
  const org = storableText(orgId);
  const all = () => {
    params.push(org);
    return 'SELECT id FROM documents WHERE org_id = ?';
  };
  const entries = (test: string, ...values: string[]) => {
    params.push(org, ...values);
    return `SELECT document_id AS id FROM document_metadata WHERE org_id = ? AND key = ?${test}`;
  };
  // Each operand of a compound is a sub-select of its own, so compounds nest in any order. A
  // negation's operand is built after its universe, so parameters follow the text's order.
  const not = (operand: () => string) => {
    const universe = all();
    return `${universe} EXCEPT SELECT id FROM (${operand()})`;
  };
  const build = (f: Filter): string => {
    switch (f.kind) {
      case 'and':
      case 'or': {
        if (f.filters.length === 0) return f.kind === 'and' ? all() : 'SELECT NULL AS id WHERE 0';
        const [first, ...rest] = f.filters;
        if (rest.length === 0 && first) return build(first);
        const op = f.kind === 'and' ? ' INTERSECT ' : ' UNION ';
        return f.filters.map((part) => `SELECT id FROM (${build(part)})`).join(op);
      }
      case 'not':
        return not(() => build(f.filter));
      case 'exists': {
        const leaf = () => entries('', storableText(f.key));
        return f.exists ? leaf() : not(leaf);
      }
      case 'compare': {
        const op = COMPARE_SQL[f.op];
        const leaf = () => entries(` AND value ${op} ?`, storableText(f.key), storableText(f.value));
        return f.op === '$ne' ? not(leaf) : leaf();
      }
      case 'list': {
        const leaf = () =>
          entries(
            ' AND value IN (SELECT value FROM json_each(?))',
            storableText(f.key),
            JSON.stringify(f.values.map(storableText)),
          );
        return f.op === '$nin' ? not(leaf) : leaf();
      }
    }
  };
  return { sql: build(filter), params };
}

/**
 * The access-list condition on the document column `access` (a JSON array, or NULL for none):
 * the document has no list, or its list shares one of `principals` (none: no list only).
 */
export function sqliteAccessCondition(access: string, principals: readonly string[]): SqlCondition {
  if (principals.length === 0) return { sql: `${access} IS NULL`, params: [] };
  return {
    sql: `(${access} IS NULL OR EXISTS (SELECT 1 FROM json_each(${access}) AS a
      WHERE a.value IN (SELECT value FROM json_each(?))))`,
    params: [JSON.stringify(principals)],
  };
}

/**
 * The ids of the org's documents that `principals` may see (sqliteAccessCondition's documents),
 * from indexes alone: the documents whose list names one of them, and those without a list.
 */
export function sqliteAccessDocuments(orgId: string, principals: readonly string[]): SqlCondition {
  const org = storableText(orgId);
  const open = 'SELECT id FROM documents WHERE org_id = ? AND access IS NULL';
  if (principals.length === 0) return { sql: open, params: [org] };
  return {
    sql: `SELECT DISTINCT document_id AS id FROM document_principals
          WHERE org_id = ? AND principal IN (SELECT value FROM json_each(?))
          UNION ALL ${open}`,
    params: [org, JSON.stringify(principals), org],
  };
}
