// One-dimensional arrays in PostgreSQL's binary format (what array_recv reads), for the chunk
// writes' parameters. node-postgres sends a Buffer parameter in binary, so each column of a batch
// goes as one buffer, written element by element outside the JS heap. Arrays of strings would be
// escaped element by element into an array literal, concatenated, flattened and encoded: with the
// tsvector literals as strings too, about 90 bytes of garbage a character of text on the main
// thread, which its scavenges promoted to the old generation while the INSERTs ran; a 100 MB text
// through a scale-out `serve` held 150 MB more old generation than at rest before V8 collected it.

/** Element types by OID (pg_type). */
export const INT4 = 23;
export const TEXT = 25;

/** ndim, flags (has nulls), element type, then length and lower bound of the one dimension. */
const HEADER_BYTES = 20;

export class BinaryArray {
  /** The bytes so far. Whoever writes an element's bytes reserves room, writes at `length`, advances it. */
  bytes: Buffer;
  length = HEADER_BYTES;
  private count = 0;
  private hasNulls = false;
  private elementStart = -1;

  /** `capacity`: the bytes expected (the buffer grows past it as needed). */
  constructor(
    private readonly elementType: number,
    capacity = 4096,
  ) {
    this.bytes = Buffer.allocUnsafe(HEADER_BYTES + capacity);
  }

  /** Room for `n` more bytes at `length` (`bytes` may be replaced). */
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + n));
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }

  int4(value: number | null): void {
    if (value === null) {
      this.null();
      return;
    }
    this.reserve(8);
    this.bytes.writeInt32BE(4, this.length);
    this.bytes.writeInt32BE(value, this.length + 4);
    this.length += 8;
    this.count++;
  }

  /** A string as UTF-8 (a lone surrogate becomes U+FFFD, as node-postgres would send it). */
  text(value: string): void {
    this.begin();
    this.reserve(Buffer.byteLength(value, 'utf8'));
    this.length += this.bytes.write(value, this.length, 'utf8');
    this.end();
  }

  null(): void {
    this.reserve(4);
    this.bytes.writeInt32BE(-1, this.length);
    this.length += 4;
    this.hasNulls = true;
    this.count++;
  }

  /** Starts an element whose bytes the caller writes; end() closes it. */
  begin(): void {
    this.reserve(4);
    this.elementStart = this.length;
    this.length += 4;
  }

  end(): void {
    this.bytes.writeInt32BE(this.length - this.elementStart - 4, this.elementStart);
    this.count++;
  }

  /** The array's bytes (over this one's buffer). */
  finish(): Buffer {
    const header = this.bytes;
    if (this.count === 0) {
      // No dimensions at all: PostgreSQL's empty array.
      header.writeInt32BE(0, 8);
      header.writeInt32BE(0, 12);
      header.writeInt32BE(this.elementType, 16);
      return header.subarray(8, HEADER_BYTES);
    }
    header.writeInt32BE(1, 0);
    header.writeInt32BE(this.hasNulls ? 1 : 0, 4);
    header.writeInt32BE(this.elementType, 8);
    header.writeInt32BE(this.count, 12);
    header.writeInt32BE(1, 16);
    return header.subarray(0, this.length);
  }
}

/** Integers (or nulls) as an int4[]. */
export function int4Array(values: readonly (number | null)[]): Buffer {
  const array = new BinaryArray(INT4, 8 * values.length);
  for (const value of values) array.int4(value);
  return array.finish();
}
