// The N of FTS5's bm25(): the row count FTS5 keeps in its "averages" record (the row of id 1 in
// the table's `_data` shadow table: a varint row count, then each column's token total), which
// its ranking reads rather than counting rows. Read here so a keyword score can be divided by the
// most the query could score with the very IDFs FTS5 ranked with (domain/bm25.ts). On a
// contentless_delete table deleted rows stay in that count, as they stay in FTS5's IDFs.

/** The row count at the head of an averages record; 0 for a table never written. */
export function averagesRowCount(block: Uint8Array | null | undefined): number {
  if (!block) return 0;
  // SQLite's varint: big-endian 7-bit groups, each byte's high bit saying another follows; a
  // ninth byte gives all its 8 bits.
  let value = 0;
  for (let i = 0; i < 8; i += 1) {
    const byte = block[i];
    if (byte === undefined) return value;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return value;
  }
  return value * 256 + (block[8] ?? 0);
}
