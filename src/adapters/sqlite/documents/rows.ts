// The documents table as the parts of SqliteDocumentStore read it: record rows, the row a job's
// write checks, the SQL that tells live rows from rows being purged, and how access lists are
// stored and read.
import type { DocumentRecord, Metadata } from '../../../domain/types.js';
import {
  accessOfColumn,
  type RowReaders,
  type DocumentRow as SharedDocumentRow,
  toDocumentRecord,
} from '../../sql-rows/document-row.js';

/** Chunks deleted per transaction when a large document or its earlier chunks are cleared. */
export const INDEX_DELETE_SLICE = 500;
/** SQL: the row is a live document, not one being purged (handed to PURGED_ORG, purges.ts). */
export const LIVE = "org_id <> ''";
/**
 * The organisation of a shadow row: the chunks of a large pending version are written under it,
 * a slice at a time, while the current version answers; the swap moves them to the document in
 * one transaction. No org has this id, so search and reads pass shadow rows by.
 */
export const shadowOrg = (documentId: string) => `shadow:${documentId}`;

/** A record row as better-sqlite3 returns it: integers, epoch milliseconds, JSON text. */
export type DocumentRow = SharedDocumentRow<number, number, string>;

export const READ_ROW: RowReaders<number, number, string> = {
  number: (value) => value,
  date: (value) => new Date(value),
  metadata: (value) => JSON.parse(value) as Metadata,
  json: (value) => JSON.parse(value) as unknown,
};

export const toRecord = (row: DocumentRow): DocumentRecord => toDocumentRecord(row, READ_ROW);

/** What a write of a job reads of its document to check it is still wanted. */
export interface WorkRow {
  org_id: string;
  version: number;
  pending_version: number | null;
  pending_status: string | null;
  pending: string | null;
  blob_key: string | null;
}

export const pendingActive = (row: WorkRow) =>
  row.pending_version !== null && (row.pending_status === 'queued' || row.pending_status === 'processing');
export const workVersion = (row: WorkRow) =>
  pendingActive(row) ? (row.pending_version as number) : row.version;

/** How an access list is stored: a JSON array, or NULL for none. */
export function accessColumn(access: readonly string[] | null): string | null {
  return access === null ? null : JSON.stringify(access);
}

/** A row's partition and access list (stored as JSON text), as canSee reads them. */
export function visibility(row: { partition: string; access: string | null }): {
  partition: string;
  access: string[] | null;
} {
  return { partition: row.partition, access: accessOfColumn(row.access) };
}
