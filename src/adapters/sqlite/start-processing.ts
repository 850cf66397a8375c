// What a document's start of processing sets, in one place (a pending version's too, in the claim). DocumentStore.markProcessing sets
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
  if (!onlyIfQueued) return STARTED.map(([column, value]) => `${column} = ${value}`).join(', ');
  // A queued pending version (a ready document's next one) starts too: its own status and
  // error, the document's attempts. A document has a pending version only while it is ready, so
  // the two cases never meet in one row.
  const pendingQueued = "pending_status = 'queued'";
  return [
    ...STARTED.filter(([column]) => column !== 'attempts' && column !== 'updated_at').map(
      ([column, value]) => `${column} = CASE WHEN status = 'queued' THEN ${value} ELSE ${column} END`,
    ),
    `attempts = CASE WHEN status = 'queued' OR ${pendingQueued} THEN attempts + 1 ELSE attempts END`,
    `updated_at = CASE WHEN status = 'queued' OR ${pendingQueued} THEN @now ELSE updated_at END`,
    `pending = CASE WHEN ${pendingQueued} THEN json_set(pending, '$.error', json('null')) ELSE pending END`,
    `pending_status = CASE WHEN ${pendingQueued} THEN 'processing' ELSE pending_status END`,
  ].join(', ');
}
