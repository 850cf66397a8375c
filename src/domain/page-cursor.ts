// The opaque cursor of lists ordered newest first by (created_at, id): documents and orgs.
import { ERRORS } from './errors.js';

export function encodePageCursor(createdAt: Date, id: string): string {
  return Buffer.from(JSON.stringify([createdAt.getTime(), id])).toString('base64url');
}

/** The position a cursor names; a 400 for anything that is not a cursor this service made. */
export function decodePageCursor(cursor: string): { createdAt: Date; id: string } {
  const invalid = () =>
    ERRORS.invalid('cursor is not a value returned as next_cursor.', [
      { pointer: '/query/cursor', message: 'unrecognised cursor' },
    ]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    typeof parsed[1] !== 'string' ||
    parsed[1].length > 64
  ) {
    throw invalid();
  }
  return { createdAt: new Date(parsed[0] as number), id: parsed[1] };
}
