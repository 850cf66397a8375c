// The metadata filter language (query, list and delete-by-filter): the JSON a client sends, its
// parsing into a typed tree with every violation refused as a 400 that points at the bad part,
// and the reference evaluator that defines what a filter means. The SQL each store compiles a
// tree to must select exactly the documents `evaluate` accepts (test/contract/filter.contract.ts).
import { ERRORS } from './errors.js';
import { METADATA_MAX_KEY_LENGTH, METADATA_MAX_VALUE_LENGTH, type Metadata } from './metadata.js';
import { cleanText } from './text.js';

/** Objects nested at most this deep: the filter itself is level 1, each $and/$or/$not one more. */
export const FILTER_MAX_DEPTH = 5;
/** Key conditions (a key with one operator, or one list) in one filter. */
export const FILTER_MAX_CONDITIONS = 100;
/** Values in one list ($in, $nin, or the `{key: [..]}` shorthand). */
export const FILTER_MAX_LIST_VALUES = 100;

export type ComparisonOperator = '$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte';
export type ListOperator = '$in' | '$nin';
const COMPARISONS: readonly ComparisonOperator[] = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'];
const LISTS: readonly ListOperator[] = ['$in', '$nin'];
const KEY_OPERATORS = [...COMPARISONS, ...LISTS, '$exists'] as const;
const LOGICAL = ['$and', '$or', '$not'] as const;

/** What one key must satisfy, as sent. */
export type KeyConditionJson =
  | string
  | string[]
  | ({ [op in ComparisonOperator]?: string } & { [op in ListOperator]?: string[] } & {
      $exists?: boolean;
    });

/** A filter as sent in JSON: several entries in one object must all hold. */
export interface FilterJson {
  $and?: FilterJson[];
  $or?: FilterJson[];
  $not?: FilterJson;
  [key: string]: KeyConditionJson | FilterJson | FilterJson[] | undefined;
}

/** A parsed filter. Keys and values are in the stores' canonical text form (cleanText). */
export type Filter =
  | { kind: 'and'; filters: Filter[] }
  | { kind: 'or'; filters: Filter[] }
  | { kind: 'not'; filter: Filter }
  | { kind: 'compare'; op: ComparisonOperator; key: string; value: string }
  | { kind: 'list'; op: ListOperator; key: string; values: string[] }
  | { kind: 'exists'; key: string; exists: boolean };

/** The JSON Pointer (RFC 6901) of `token` under `base`. */
export function pointerTo(base: string, token: string | number): string {
  return `${base}/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

function refuse(pointer: string, message: string): never {
  throw ERRORS.invalid(`Invalid filter at ${pointer}: ${message}.`, [{ pointer, message }]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class FilterParser {
  private conditions = 0;

  /** A filter object at `pointer`, `depth` levels deep (the filter itself is 1). */
  object(raw: unknown, pointer: string, depth: number): Filter {
    if (!isPlainObject(raw)) refuse(pointer, 'expected a filter object');
    if (depth > FILTER_MAX_DEPTH) {
      refuse(pointer, `filters may nest at most ${FILTER_MAX_DEPTH} levels of $and, $or and $not`);
    }
    const filters: Filter[] = [];
    for (const [name, value] of Object.entries(raw)) {
      const at = pointerTo(pointer, name);
      if (name === '$and' || name === '$or') {
        if (!Array.isArray(value)) refuse(at, `${name} takes a list of filter objects`);
        if (value.length === 0) refuse(at, `${name} needs at least one filter`);
        const kind = name === '$and' ? 'and' : 'or';
        filters.push({ kind, filters: value.map((f, i) => this.object(f, pointerTo(at, i), depth + 1)) });
      } else if (name === '$not') {
        filters.push({ kind: 'not', filter: this.object(value, at, depth + 1) });
      } else {
        filters.push(...this.key(name, value, at));
      }
    }
    const [only] = filters;
    return filters.length === 1 && only ? only : { kind: 'and', filters };
  }

  /** The conditions on metadata key `rawKey`. */
  private key(rawKey: string, value: unknown, at: string): Filter[] {
    if (rawKey.length === 0 || rawKey.length > METADATA_MAX_KEY_LENGTH || rawKey.includes('\u0000')) {
      refuse(at, `a metadata key has 1 to ${METADATA_MAX_KEY_LENGTH} characters and no NUL`);
    }
    const key = cleanText(rawKey);
    // Only $and, $or and $not are operators at this level; a metadata key may start with `$`. A
    // misspelt operator still fails below, as its value is no key condition.
    const hint = rawKey.startsWith('$')
      ? ` (${rawKey} is read as a metadata key: the logical operators are ${LOGICAL.join(', ')})`
      : '';
    if (typeof value === 'string') return [this.compare('$eq', key, value, at)];
    if (Array.isArray(value)) return [this.list('$in', key, value, at, hint)];
    if (!isPlainObject(value)) {
      refuse(at, `expected a string, a list of strings or an operator object${hint}`);
    }
    const entries = Object.entries(value);
    if (entries.length === 0)
      refuse(at, `an operator object needs at least one of ${KEY_OPERATORS.join(', ')}`);
    return entries.map(([op, operand]) => {
      const opAt = pointerTo(at, op);
      if ((COMPARISONS as readonly string[]).includes(op)) {
        if (typeof operand !== 'string') refuse(opAt, `${op} takes a string`);
        return this.compare(op as ComparisonOperator, key, operand, opAt);
      }
      if ((LISTS as readonly string[]).includes(op)) {
        if (!Array.isArray(operand)) refuse(opAt, `${op} takes a list of strings`);
        return this.list(op as ListOperator, key, operand, opAt, '');
      }
      if (op === '$exists') {
        if (typeof operand !== 'boolean') refuse(opAt, '$exists takes true or false');
        this.count(opAt);
        return { kind: 'exists', key, exists: operand };
      }
      return refuse(opAt, `unknown operator ${op}; a key's operators are ${KEY_OPERATORS.join(', ')}${hint}`);
    });
  }

  private compare(op: ComparisonOperator, key: string, value: string, at: string): Filter {
    this.count(at);
    return { kind: 'compare', op, key, value: this.value(value, at) };
  }

  private list(op: ListOperator, key: string, values: unknown[], at: string, hint: string): Filter {
    if (values.length === 0) refuse(at, `a list of values needs at least one value${hint}`);
    if (values.length > FILTER_MAX_LIST_VALUES) {
      refuse(at, `a list holds at most ${FILTER_MAX_LIST_VALUES} values, got ${values.length}`);
    }
    this.count(at);
    return {
      kind: 'list',
      op,
      key,
      values: values.map((v, i) => {
        if (typeof v !== 'string') refuse(pointerTo(at, i), `expected a string${hint}`);
        return this.value(v, pointerTo(at, i));
      }),
    };
  }

  private value(value: string, at: string): string {
    if (value.length > METADATA_MAX_VALUE_LENGTH) {
      refuse(at, `a value has at most ${METADATA_MAX_VALUE_LENGTH} characters`);
    }
    return cleanText(value);
  }

  private count(at: string): void {
    this.conditions += 1;
    if (this.conditions > FILTER_MAX_CONDITIONS) {
      refuse(at, `a filter holds at most ${FILTER_MAX_CONDITIONS} conditions`);
    }
  }
}

/**
 * The filter `raw` (parsed JSON) as a tree; null for `{}`, which every document passes. Refuses
 * anything else than the language with a 400 whose pointer starts at `pointer` (`/filter` for a
 * body field, `/query/filter` for a query-string parameter).
 */
export function parseFilter(raw: unknown, pointer: string): Filter | null {
  if (isPlainObject(raw) && Object.keys(raw).length === 0) return null;
  return new FilterParser().object(raw, pointer, 1);
}

/** A filter sent as JSON text (a query-string parameter). */
export function parseFilterText(text: string, pointer: string): Filter | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    refuse(pointer, 'not valid JSON (URL-encode a JSON filter object)');
  }
  return parseFilter(raw, pointer);
}

/** -1, 0 or 1 as `a` sorts before, with or after `b` by Unicode code point (as UTF-8 bytes do). */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(j) as number;
    if (x !== y) return x < y ? -1 : 1;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  if (i < a.length) return 1;
  return j < b.length ? -1 : 0;
}

/**
 * Whether a document with `metadata` passes `filter`: the meaning every store must reproduce.
 * A comparison ($eq, $gt, …) or $in on a key the document lacks is false, so its negations ($ne,
 * $nin, $not) are true there; $exists tests presence alone.
 */
export function evaluate(filter: Filter | null, metadata: Metadata): boolean {
  if (filter === null) return true;
  switch (filter.kind) {
    case 'and':
      return filter.filters.every((f) => evaluate(f, metadata));
    case 'or':
      return filter.filters.some((f) => evaluate(f, metadata));
    case 'not':
      return !evaluate(filter.filter, metadata);
    case 'exists':
      return Object.hasOwn(metadata, filter.key) === filter.exists;
    case 'list': {
      const value = Object.hasOwn(metadata, filter.key) ? metadata[filter.key] : undefined;
      const found = value !== undefined && filter.values.includes(value);
      return filter.op === '$in' ? found : !found;
    }
    case 'compare': {
      const value = Object.hasOwn(metadata, filter.key) ? metadata[filter.key] : undefined;
      if (value === undefined) return filter.op === '$ne';
      const order = compareCodePoints(value, filter.value);
      switch (filter.op) {
        case '$eq':
          return order === 0;
        case '$ne':
          return order !== 0;
        case '$gt':
          return order > 0;
        case '$gte':
          return order >= 0;
        case '$lt':
          return order < 0;
        case '$lte':
          return order <= 0;
      }
    }
  }
}
