// Partitions: every document belongs to one partition of its org, named when it is ingested
// (`default` when not) and fixed for its life. A key may be limited to some partitions; what it
// may see is a DocumentAccess, which every read, search, change and ingest of the key is
// restricted by. A request may narrow its key's partitions (`partitions: [..]`), never widen them.
//
// The restriction is one exact condition on the document, applied by the stores and indexes
// where the org and the metadata filter are (before ranking); a second restriction of the same
// kind (an access list) is another field of DocumentAccess, checked in the same places.
import { ERRORS } from './errors.js';
import type { DocumentRecord } from './types.js';

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

/** What a request may see of its org's documents. */
export interface DocumentAccess {
  /** The partitions it may see; null: every partition of the org. */
  partitions: readonly string[] | null;
}

/** A key limited to no partition: it sees them all. */
export const ALL_PARTITIONS: DocumentAccess = { partitions: null };

/** What works on the whole org: it ranks or writes whatever the partition, so a key limited to partitions may not use it. */
export type WholeOrgFeature = 'evaluations' | 'sources';

/** 403 partition_forbidden unless the key sees every partition. */
export function requireEveryPartition(access: DocumentAccess, feature: WholeOrgFeature): void {
  if (access.partitions !== null) throw ERRORS.needsEveryPartition(feature);
}

/** The access of a key issued with these partitions (null or empty: every partition). */
export function accessOfKey(partitions: readonly string[] | null): DocumentAccess {
  return partitions === null || partitions.length === 0
    ? ALL_PARTITIONS
    : { partitions: [...new Set(partitions)].sort() };
}

/** Whether the request may see the document: another partition's is as another org's. */
export function canSee(access: DocumentAccess, doc: Pick<DocumentRecord, 'partition'>): boolean {
  return access.partitions === null || access.partitions.includes(doc.partition);
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
  const forbidden = names.find((name) => !canSee(access, { partition: name }));
  if (forbidden !== undefined) throw ERRORS.partitionForbidden(forbidden);
  return names;
}

/** The partition a document is ingested into: the given one (which the key must hold) or `default`. */
export function partitionToWrite(access: DocumentAccess, given: string | null | undefined): string {
  const partition = given ?? DEFAULT_PARTITION;
  if (!canSee(access, { partition })) throw ERRORS.partitionForbidden(partition);
  return partition;
}
