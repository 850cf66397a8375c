// What the parts of PgDocumentStore share: how a record row is read, and the SQL and text rules
// every statement follows.
import { cleanText } from '../../../domain/text.js';
import type { DocumentRecord, Metadata } from '../../../domain/types.js';
import {
  type PendingSpec,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../../sql-rows/document-row.js';

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

/** What a job's write reads of its document (see saveIndex in jobs.ts). */
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
