// Random ids and tokens, SHA-256 digests and HMACs, and the constant-time comparison, for the
// whole domain: the one module of domain/ that draws them from node:crypto, so an id's form or a
// digest's encoding is written once. (secrets.ts keeps its AES-256-GCM cipher to itself.)
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** A random UUID v4, dashes included (a document's id). */
export function newUuid(): string {
  return randomUUID();
}

/** `<prefix>_` and a random UUID's 32 hex digits without dashes, so a log line says what the id is. */
export function prefixedId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '')}`;
}

/** `bytes` random bytes in the encoding given. */
export function randomToken(bytes: number, encoding: 'hex' | 'base64' | 'base64url'): string {
  return randomBytes(bytes).toString(encoding);
}

/** The SHA-256 of the parts one after the other (each as UTF-8), in hex. */
export function sha256Hex(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part, 'utf8');
  return hash.digest('hex');
}

/** The SHA-256 of a text (as UTF-8), as 32 bytes. */
export function sha256Bytes(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The HMAC-SHA256 of a text (as UTF-8) under `key`, in base64. */
export function hmacSha256Base64(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text, 'utf8').digest('base64');
}

/** Whether two byte strings are equal, in a time that does not depend on where they differ. */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
