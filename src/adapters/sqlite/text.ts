// The one canonical form for strings this adapter writes. SQLite would keep NUL but cut it short
// in SQL functions, and better-sqlite3 turns a lone surrogate into three U+FFFD; PostgreSQL
// refuses NUL outright. Every store adapter writes the same canonical form (the document-store
// contract pins it), so what a user reads back does not depend on the deployment.
import { cleanText } from '../../domain/text.js';

/** NUL removed, each lone UTF-16 surrogate replaced by U+FFFD (the PostgreSQL stores' form too). */
export const storableText = cleanText;

export function storableNullable(s: string | null): string | null {
  return s === null ? null : storableText(s);
}

/** Metadata in canonical form: keys and values both. */
export function storableMetadata(metadata: Record<string, string>): Record<string, string> {
  // fromEntries defines own properties, so a key such as "__proto__" stays an ordinary key.
  return Object.fromEntries(
    Object.entries(metadata).map(([key, value]) => [storableText(key), storableText(value)]),
  );
}
