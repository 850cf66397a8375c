// Text clean-up applied at the edge, so every store (SQLite, PostgreSQL) receives the same
// well-formed strings: NUL bytes are removed and lone surrogates become U+FFFD.

export function cleanText(value: string): string {
  const withoutNul = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  return withoutNul.isWellFormed() ? withoutNul : withoutNul.toWellFormed();
}

/**
 * What a file name may not keep: controls (Cc), format characters (Cf: the bidi overrides and
 * isolates such as U+202E, which make `…\u202Elmth.exe` read as `…exe.html`, zero-width
 * characters, the BOM), line and paragraph separators, and the other code points Unicode says to
 * draw as nothing (variation selectors, Hangul fillers, …), so a name shows what it is.
 */
const INVISIBLE_CHARACTERS = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/** Display name only: basename, Unicode-normalised, invisible characters removed, bounded. */
export function displayFilename(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const base = raw.split(/[\\/]/).pop() ?? '';
  const visible = cleanText(base).normalize('NFC').replace(INVISIBLE_CHARACTERS, '').trim();
  // At most 255 characters, counted by code point so that no pair of surrogates is cut in two.
  const cleaned = Array.from(visible).slice(0, 255).join('').trim();
  return cleaned.length > 0 ? cleaned : null;
}
