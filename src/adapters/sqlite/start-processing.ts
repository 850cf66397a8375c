// What a document's start of processing sets, in one place. DocumentStore.markProcessing sets
// it; SqliteTableQueue's claim (table-queue.ts) sets it too, for a queued document: in SQLite a job is its
// document's row, so the claim saves the processor that separate commit. Both build their SQL
// from this list, so the two cannot drift apart.
const STARTED: readonly (readonly [column: string, value: string])[] = [
  ['status', "'processing'"],
  ['attempts', 'attempts + 1'],
  ['error_code', 'NULL'],
  ['error_message', 'NULL'],
  ['updated_at', '@now'],
];

/**
 * The SET terms (the statement binds `@now`). With `onlyIfQueued`, a document in any other status
 * keeps its values; the right-hand sides of an UPDATE all read the row as it was.
 */
export function startProcessingSet(onlyIfQueued: boolean): string {
  return STARTED.map(([column, value]) =>
    onlyIfQueued
      ? `${column} = CASE WHEN status = 'queued' THEN ${value} ELSE ${column} END`
      : `${column} = ${value}`,
  ).join(', ');
}
