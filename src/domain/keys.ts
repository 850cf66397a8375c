// API keys: `dix_` + 256 random bits (base64url). Only the SHA-256 is stored; the first
// characters are kept for display so an operator can tell keys apart.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'dix_';
const KEY_PATTERN = /^dix_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}

/** Constant-time comparison of two hex digests (the store looks keys up by hash; this re-checks). */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function newOrgId(): string {
  return `org_${randomUUID().replaceAll('-', '')}`;
}

export function newKeyId(): string {
  return `key_${randomUUID().replaceAll('-', '')}`;
}

/** SHA-256 of a shared secret (the admin token), to compare against with sameSecret. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * Constant-time check of a presented secret against a digest: both are hashed to 32 bytes first,
 * so neither the content nor the length of the secret shows in the time taken.
 */
export function sameSecret(presented: string, expected: Buffer): boolean {
  return timingSafeEqual(secretDigest(presented), expected);
}
