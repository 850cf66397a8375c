// API keys: `dix_` + 256 random bits (base64url). Only the SHA-256 is stored; the first
// characters are kept for display so an operator can tell keys apart.
import { constantTimeEqual, prefixedId, randomToken, sha256Bytes, sha256Hex } from './ids-and-hashes.js';

export const KEY_PREFIX = 'dix_';
const KEY_PATTERN = /^dix_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomToken(32, 'base64url');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}

/** Constant-time comparison of two hex digests (the store looks keys up by hash; this re-checks). */
export function sameDigest(a: string, b: string): boolean {
  return constantTimeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

export function newOrgId(): string {
  return prefixedId('org');
}

export function newKeyId(): string {
  return prefixedId('key');
}

/** SHA-256 of a shared secret (the admin token), to compare against with sameSecret. */
export function secretDigest(secret: string): Buffer {
  return sha256Bytes(secret);
}

/**
 * Constant-time check of a presented secret against a digest: both are hashed to 32 bytes first,
 * so neither the content nor the length of the secret shows in the time taken.
 */
export function sameSecret(presented: string, expected: Buffer): boolean {
  return constantTimeEqual(secretDigest(presented), expected);
}
