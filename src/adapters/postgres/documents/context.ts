// What the parts of PgDocumentStore share: the pieces the store builds once and hands to each
// part's constructor, how a record row is read, and the SQL and text rules every statement follows.
import type { Clock, KeywordIndexWriter } from '../../../domain/ports.js';
import { cleanText } from '../../../domain/text.js';
import type { DocumentRecord, Metadata } from '../../../domain/types.js';
import {
  type PendingSpec,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../../sql-rows/document-row.js';
import type { PgDatabase, Queryable } from '../database.js';
import type { PgWebhookOutbox } from '../webhook-store.js';

/** Built once by PgDocumentStore's constructor; each part keeps the pieces it uses. */
export interface PgDocumentContext {
  readonly db: PgDatabase;
  readonly clock: Clock;
  /** The documents table's qualified name. */
  readonly documents: string;
  /** A new job's state: 'pending' when PgTableQueue runs the jobs, else 'done' (PgDocumentStoreOptions). */
  readonly initialJobState: 'pending' | 'done';
  /** The keyword index the store writes in its own transactions. */
  readonly keyword: KeywordIndexWriter<Queryable, 'async'>;
  /** Writes webhook events in the transactions of the status changes. */
  readonly outbox: PgWebhookOutbox;
}

/** SQL: the row is not marked deleted. Every read and write but the removal of marked rows says it. */
export const LIVE = 'deleted_at IS NULL';

/** A record row as node-postgres returns it: bigints as strings, Dates, parsed JSON. */
export type DocumentRow = SharedDocumentRow<string, Date, Metadata>;

export const READ_ROW: RowReaders<string, Date, Metadata> = {
  number: (value) => Number(value),
  date: (value) => value,
  metadata: (value) => value,
  json: (value) => value,
};

/** What a job's write reads of its document (see saveIndex in job-writes.ts). */
export interface WorkRow {
  org_id: string;
  version: number;
  pending_version: number | null;
  pending_status: string | null;
  pending: PendingSpec | null;
  blob_key: string | null;
}

export const toRecord = (row: DocumentRow): DocumentRecord => toDocumentRecord(row, READ_ROW);

/** Text as stored: NUL removed (PostgreSQL refuses it), lone surrogates replaced by U+FFFD. */
export function storable(s: string): string;
export function storable(s: string | null): string | null;
export function storable(s: string | null): string | null {
  return s === null ? null : cleanText(s);
}
