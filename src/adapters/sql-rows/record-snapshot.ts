// The webhook outbox's snapshot of a status record, the same for every SQL backend: each builds a
// JSON object of the record columns in SQL (inside the transaction of the status change, so the
// event carries the record exactly as that change left it) and reads it back here.
import type { DocumentRecord, Metadata } from '../../domain/types.js';
import { type DocumentRow, RECORD_COLUMNS, toDocumentRecord } from './document-row.js';

/** The record columns' names, in RECORD_COLUMNS order. */
export const RECORD_COLUMN_NAMES: readonly string[] = RECORD_COLUMNS.split(',').map((c) => c.trim());

/**
 * `'id', <alias>.id, 'org_id', <alias>.org_id, …`: the arguments of json_object /
 * jsonb_build_object. `wrap` adjusts a column (SQLite stores metadata as JSON text).
 */
export function snapshotArguments(alias: string, wrap: (column: string, ref: string) => string): string {
  return RECORD_COLUMN_NAMES.map((c) => `'${c}', ${wrap(c, `${alias}.${c}`)}`).join(', ');
}

/** Reads a snapshot: numbers may come as numbers or numeric text, timestamps as epoch ms or ISO text. */
export function snapshotToRecord(snapshot: string | object): DocumentRecord {
  const row = (typeof snapshot === 'string' ? JSON.parse(snapshot) : snapshot) as DocumentRow<
    number | string,
    number | string,
    Metadata
  >;
  return toDocumentRecord(row, {
    number: (value) => Number(value),
    date: (value) => new Date(value),
    metadata: (value) => value,
    // Embedded as JSON by the snapshot (json() on SQLite, jsonb on PostgreSQL); text if not.
    json: (value) => (typeof value === 'string' ? JSON.parse(value) : value),
  });
}
