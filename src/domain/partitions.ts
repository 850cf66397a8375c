// Partitions: every document belongs to one partition of its org, named when it is ingested
// (`default` when not) and fixed for its life. A key may be limited to some partitions; what it
// may see is a DocumentAccess, which every read, search, change and ingest of the key is
// restricted by. A request may narrow its key's partitions (`partitions: [..]`), never widen them.
//
// The restriction is one exact condition on the document, applied by the stores and indexes
// where the org and the metadata filter are (before ranking); the second restriction of the same
// kind, the access list (domain/principals.ts), is the `principals` field of DocumentAccess,
// checked in the same places.
import { ERRORS } from './errors.js';
import { accessAllows, principalsToRead } from './principals.js';
import type { DocumentAccess, DocumentRecord } from './types.js';

export type { DocumentAccess } from './types.js';

export const DEFAULT_PARTITION = 'default';

/** A partition's name: lower-case letters, digits, `_` and `-`, starting with a letter or digit. */
export const PARTITION_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';
const PARTITION_RE = new RegExp(PARTITION_PATTERN);

/** Most partitions one request or key may name. */
export const MAX_PARTITIONS_PER_REQUEST = 100;

export function isPartitionName(value: unknown): value is string {
  return typeof value === 'string' && PARTITION_RE.test(value);
}

/**
 * The one check of a partition name given by a caller: the name, or 400 invalid_request pointing
 * at `pointer`. Every place that takes a name (a body, a form part, a query string, a source, a
 * key) goes through it, so they refuse alike.
 */
export function checkPartitionName(value: unknown, pointer: string): string {
  if (!isPartitionName(value)) {
    throw ERRORS.invalid(`partition names match ${PARTITION_PATTERN}.`, [
      { pointer, message: `must match pattern "${PARTITION_PATTERN}"` },
    ]);
  }
  return value;
}

/** checkPartitionName on each name (pointed at as `pointer/i`), and at most MAX_PARTITIONS_PER_REQUEST of them. */
export function checkPartitionNames(names: readonly unknown[], pointer: string, tooMany: string): string[] {
  const checked = names.map((name, i) => checkPartitionName(name, `${pointer}/${i}`));
  if (checked.length > MAX_PARTITIONS_PER_REQUEST) {
    throw ERRORS.invalid(tooMany, [
      { pointer, message: `must NOT have more than ${MAX_PARTITIONS_PER_REQUEST} items` },
    ]);
  }
  return checked;
}

/** A key limited to no partition and bound to no principal: it sees every document. */
export const ALL_PARTITIONS: DocumentAccess = { partitions: null, principals: null };

/** What works on the whole org: it ranks or writes whatever the partition, so a key limited to partitions may not use it. */
export type WholeOrgFeature = 'evaluations' | 'sources';

/**
 * 403 unless the key sees every document: partition_forbidden for a key limited to partitions,
 * principal_forbidden for one bound to principals.
 */
export function requireEveryPartition(access: DocumentAccess, feature: WholeOrgFeature): void {
  if (access.partitions !== null) throw ERRORS.needsEveryPartition(feature);
  if (access.principals !== null) throw ERRORS.needsUnboundKey(feature);
}

/**
 * The access of a key issued with these partitions (null or empty: every partition) and bound to
 * these principals (null: none; an empty list is a key that sees only documents without an
 * access list).
 */
export function accessOfKey(
  partitions: readonly string[] | null,
  principals: readonly string[] | null = null,
): DocumentAccess {
  return {
    partitions: partitions === null || partitions.length === 0 ? null : [...new Set(partitions)].sort(),
    principals: principals === null ? null : [...new Set(principals)].sort(),
  };
}

/**
 * The access of one request: its key's, with the principals it names (a subset of a bound key's:
 * 403 principal_forbidden at `pointer` otherwise) in place of the key's.
 */
export function accessOfRequest(
  key: DocumentAccess,
  requested: readonly unknown[] | null | undefined,
  pointer: string,
): DocumentAccess {
  if (requested === undefined || requested === null) return key;
  return { partitions: key.partitions, principals: principalsToRead(key.principals, requested, pointer) };
}

/** The access a store re-checks under its write's lock: the request's when restricted, else none. */
export function seenByOf(access: DocumentAccess): DocumentAccess | undefined {
  return access.partitions === null && access.principals === null ? undefined : access;
}

/**
 * Whether the request may see the document: another partition's, or one whose access list
 * shares none of the request's principals, is as another org's.
 */
export function canSee(
  access: DocumentAccess,
  doc: Pick<DocumentRecord, 'partition'> & { access?: readonly string[] | null },
): boolean {
  return (
    (access.partitions === null || access.partitions.includes(doc.partition)) &&
    accessAllows(doc.access ?? null, access.principals)
  );
}

/**
 * The partitions a request reads: those it names (`requested`), which must all be the key's
 * (403 partition_forbidden otherwise, pointing at `pointer`), else every one the key may see.
 * null: no restriction (every partition of the org).
 */
export function partitionsToRead(
  access: DocumentAccess,
  requested: readonly string[] | null | undefined,
  pointer: string,
): string[] | null {
  if (requested === null || requested === undefined) {
    return access.partitions === null ? null : [...access.partitions];
  }
  checkPartitionNames(requested, pointer, `At most ${MAX_PARTITIONS_PER_REQUEST} partitions may be named.`);
  const names = [...new Set(requested)];
  const forbidden = names.find((name) => access.partitions !== null && !access.partitions.includes(name));
  if (forbidden !== undefined) throw ERRORS.partitionForbidden(forbidden);
  return names;
}

/** The partition a document is ingested into: the given one (which the key must hold) or `default`. */
export function partitionToWrite(access: DocumentAccess, given: string | null | undefined): string {
  const partition = given ?? DEFAULT_PARTITION;
  if (access.partitions !== null && !access.partitions.includes(partition)) {
    throw ERRORS.partitionForbidden(partition);
  }
  return partition;
}
