// What the parts of SqliteDocumentStore share: the connection, one statement cache and one group
// commit (so the writes of every part join the same shared transactions), the clock, the keyword
// index's writer and the webhook outbox, both written inside the parts' transactions.
import type { SlicedKeywordIndexWriter } from '../../../domain/ports.js';
import type { Database } from '../database.js';
import type { GroupCommit } from '../group-commit.js';
import type { StatementCache } from '../statements.js';
import type { SqliteWebhookOutbox } from '../webhook-store.js';

export interface SqliteDocumentContext {
  readonly db: Database;
  /** One cache for every part: a statement two parts run is prepared once. */
  readonly sql: StatementCache;
  /** One group commit for every part: writes of one event-loop turn share one transaction. */
  readonly commits: GroupCommit;
  /** The clock's time, in epoch milliseconds. */
  readonly now: () => number;
  /** The keyword index the records' writes keep in step, on the same database. */
  readonly keyword: SlicedKeywordIndexWriter<void, 'sync'>;
  /** Writes webhook events in the transactions of the status changes. */
  readonly outbox: SqliteWebhookOutbox;
}
