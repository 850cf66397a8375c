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

// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Display name only: basename, Unicode-normalised, control characters removed, bounded. */
export function displayFilename(raw: string | undefined): string | null {
  if (!raw) return null;
  const base = raw.split(/[\\/]/).pop() ?? '';
  const cleaned = base.normalize('NFC').replace(CONTROL_CHARACTERS, '').trim().slice(0, 255);
  return cleaned.length > 0 ? cleaned : null;
}
