// A chunk's words (domain/search-words.ts) as a tsvector literal, so PostgreSQL indexes exactly
// the words the embedded index does: PostgreSQL's own parser never sees the text, and
// to_tsvector's dictionaries play no part.

/** tsvector positions run from 1 to 16383; PostgreSQL keeps at most 256 of each lexeme. */
const MAX_POSITION = 16_383;
const MAX_POSITIONS_PER_LEXEME = 256;

/** Quoted as tsvector input wants a lexeme: a quote doubled, a backslash escaped. */
export function quoteLexeme(word: string): string {
  return `'${word.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** The word of a literal quoteLexeme made. */
export function unquoteLexeme(literal: string): string {
  return literal.slice(1, -1).replaceAll("''", "'").replace(/\\(.)/g, '$1');
}

/** `'word':1,4 'other':2 …` for space-separated words (an empty string for none). */
export function tsvectorLiteral(words: string): string {
  if (words === '') return '';
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const word of words.split(' ')) {
    position = Math.min(position + 1, MAX_POSITION);
    const list = positions.get(word);
    if (list === undefined) positions.set(word, [position]);
    else if (list.length < MAX_POSITIONS_PER_LEXEME && list[list.length - 1] !== position)
      list.push(position);
  }
  const parts: string[] = [];
  for (const [word, list] of positions) parts.push(`${quoteLexeme(word)}:${list.join(',')}`);
  return parts.join(' ');
}
