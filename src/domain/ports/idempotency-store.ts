// Idempotency-Key records: claiming a key, storing the response to replay, forgetting it.

/**
 * Idempotency-Key records, scoped to an org. `claim` is atomic: exactly one of several concurrent
 * requests with the same key gets null (it owns the key); the others get the record it made.
 */
export interface IdempotencyStore {
  /**
   * Records the key as in flight, unless a live record exists: then returns that record. A record
   * older than `ttlMs`, or in flight for longer than `staleInFlightMs` (its request died), is
   * replaced.
   */
  claim(
    record: { orgId: string; key: string; fingerprint: string; createdAt: Date },
    limits: { ttlMs: number; staleInFlightMs: number },
  ): Promise<IdempotencyRecord | null>;
  /** Stores the response to replay. */
  complete(orgId: string, key: string, status: number, body: string): Promise<void>;
  /** Forgets an in-flight key whose request failed, so the client may retry with it. */
  release(orgId: string, key: string): Promise<void>;
  /** Forgets every record of the org, in flight or done; how many there were. */
  purgeOrg(orgId: string): Promise<number>;
}

export interface IdempotencyRecord {
  orgId: string;
  key: string;
  /** SHA-256 of the operation + request body. */
  fingerprint: string;
  state: 'in_flight' | 'done';
  status: number | null;
  body: string | null;
  createdAt: Date;
}
