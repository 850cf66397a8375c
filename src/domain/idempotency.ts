// Idempotency-Key on the ingest operations (Stripe / IETF httpapi draft semantics): the first
// request with a key runs; a retry with the same key and the same request replays its 202 for
// 24 h; the same key with another request is refused (422); while the first is still running a
// duplicate gets 409. Failed requests release their key so the client can retry with it. The
// response is stored in the transaction of the write it answers (IdempotentAnswer), so a crash
// between the write and the response cannot make a retry write twice.
import { ERRORS } from './errors.js';
import { sha256Hex } from './ids-and-hashes.js';
import type { Clock, IdempotencyKeyRef, IdempotencyStore } from './ports.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * An in-flight record older than this belongs to a request that died (a killed server); its key is
 * free again. A key is held only while the documents are written (an upload is read and stored
 * before), which takes milliseconds: a minute is long past any live request, and a client whose
 * request died with the server need not wait long to retry with the same key.
 */
export const IDEMPOTENCY_STALE_IN_FLIGHT_MS = 60 * 1000;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

const KEY_PATTERN = /^[\x21-\x7e]+$/;

/** Validates the header value; null when the header is absent. */
export function parseIdempotencyKey(raw: string | string[] | undefined): string | null {
  if (raw === undefined) return null;
  const invalid = (message: string) =>
    ERRORS.invalid(`Invalid Idempotency-Key header: ${message}.`, [
      { pointer: '/header/idempotency-key', message },
    ]);
  if (Array.isArray(raw)) throw invalid('send it once');
  const key = raw.trim();
  if (key.length === 0) throw invalid('it is empty');
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH)
    throw invalid(`it is longer than ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`);
  if (!KEY_PATTERN.test(key)) throw invalid('use printable ASCII characters without spaces');
  return key;
}

/** A stable fingerprint of a request: object keys are sorted, so key order does not matter. */
export function fingerprintRequest(operation: string, request: unknown): string {
  return sha256Hex(operation, '\u0000', canonicalJson(request));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export class IdempotencyService {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
  ) {}

  /**
   * `execute` is given the key so that its write can store the response in the same transaction
   * (IdempotentAnswer); the response is stored again afterwards, for a write that did not.
   */
  async run<T>(
    orgId: string,
    key: string,
    fingerprint: string,
    execute: (key: IdempotencyKeyRef) => Promise<T>,
  ): Promise<{ result: T; replayed: boolean }> {
    const existing = await this.store.claim(
      { orgId, key, fingerprint, createdAt: this.clock.now() },
      { ttlMs: IDEMPOTENCY_TTL_MS, staleInFlightMs: IDEMPOTENCY_STALE_IN_FLIGHT_MS },
    );
    if (existing) {
      if (existing.fingerprint !== fingerprint) throw ERRORS.idempotencyReused();
      if (existing.state === 'in_flight' || existing.body === null) throw ERRORS.idempotencyInUse();
      return { result: JSON.parse(existing.body) as T, replayed: true };
    }
    let result: T;
    try {
      result = await execute({ orgId, key });
    } catch (error) {
      await this.store.release(orgId, key);
      throw error;
    }
    await this.store.complete(orgId, key, 202, JSON.stringify(result));
    return { result, replayed: false };
  }
}
