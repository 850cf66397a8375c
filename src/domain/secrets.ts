// Secrets kept at rest (a source's credentials): AES-256-GCM under SECRETS_KEY, with a fresh
// 96-bit nonce per value. A value sealed under the previous key (SECRETS_KEY_PREVIOUS) still
// opens, so a key is rotated by moving it to SECRETS_KEY_PREVIOUS and setting a new SECRETS_KEY;
// each value is sealed again under the new key the next time it is used (docs/SOURCES.md).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Sealed values read `v1.<base64url nonce>.<base64url ciphertext + tag>`. */
const PREFIX = 'v1';

export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretsKeyError';
  }
}

/**
 * A 32-byte key written as 64 hex digits or as base64 (standard or URL-safe); anything else is
 * refused, so a truncated or mistyped key fails at start rather than sealing with a weak one.
 */
export function parseSecretsKey(text: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) {
    const key = Buffer.from(trimmed.replaceAll('-', '+').replaceAll('_', '/'), 'base64');
    if (key.length === 32) return key;
  }
  throw new SecretsKeyError('a secrets key must be 32 bytes, written as 64 hex digits or as base64');
}

export class SecretBox {
  constructor(
    private readonly current: Buffer,
    private readonly previous: Buffer | null = null,
  ) {
    if (current.length !== 32 || (previous !== null && previous.length !== 32)) {
      throw new SecretsKeyError('a secrets key must be 32 bytes');
    }
  }

  seal(plain: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current, nonce);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  /** The plain text, and whether it was sealed under the previous key (then seal it again). */
  open(sealed: string): { plain: string; stale: boolean } {
    const [prefix, nonceText, bodyText] = sealed.split('.');
    if (prefix !== PREFIX || nonceText === undefined || bodyText === undefined) {
      throw new SecretsKeyError('not a sealed secret');
    }
    const nonce = Buffer.from(nonceText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    for (const [key, stale] of [
      [this.current, false],
      [this.previous, true],
    ] as const) {
      if (key === null) continue;
      const plain = tryOpen(key, nonce, body);
      if (plain !== null) return { plain, stale };
    }
    throw new SecretsKeyError(
      'a stored secret opens with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS (was the key changed without keeping the old one?)',
    );
  }
}

function tryOpen(key: Buffer, nonce: Buffer, body: Buffer): string | null {
  if (body.length < TAG_BYTES || nonce.length !== NONCE_BYTES) return null;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, nonce);
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(body.subarray(0, body.length - TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
}
