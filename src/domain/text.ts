// Text and metadata clean-up applied at the edge, so every store (SQLite, PostgreSQL) receives
// the same well-formed strings: NUL bytes are removed and lone surrogates become U+FFFD.
import type { Metadata } from './types.js';

export function cleanText(value: string): string {
  const withoutNul = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed();
}

export function cleanMetadata(metadata: Metadata): Metadata {
  // A null-prototype object: keys such as `__proto__` stay plain data.
  const out: Metadata = Object.create(null);
  for (const [key, value] of Object.entries(metadata)) out[cleanText(key)] = cleanText(value);
  return out;
}
