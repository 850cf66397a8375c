// The words of a text, each turned into its indexed form, without making a string per word
// where a word is plain ASCII (most words): such a word is looked up by its position in the
// lower-cased text, so a word seen before (text repeats its words) costs a hash and a comparison,
// not a substring, a regex test and a map lookup. Only a word not yet in the table is cut out and
// analysed; a run holding other characters is cut out and handed to the caller's analysis.

/** Slots of a table (a power of two); it is cleared when a third of them are taken. */
const SLOTS = 1 << 17;
const MAX_ENTRIES = Math.floor(SLOTS / 3);

const isWordCode = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

/**
 * A bounded table from a word of lower-case ASCII letters and digits to its analysed form, for
 * one analysis. Cleared when full, which bounds it without bookkeeping.
 */
export class AsciiWordTable {
  private readonly keys: Array<string | undefined> = new Array<string | undefined>(SLOTS);
  private readonly forms: string[] = new Array<string>(SLOTS);
  private readonly hashes = new Int32Array(SLOTS);
  private entries = 0;

  /** `analyse` takes a word of [a-z0-9] and returns what the index holds for it. */
  constructor(private readonly analyse: (word: string) => string) {}

  /**
   * The analysed words of lower-case text, in order, separated by single spaces ('' when it has
   * none). A run of [a-z0-9] is a word of this table's; a run of [a-z0-9] and characters above
   * U+007F that holds any of the latter is cut out and given to `otherRun`, which pushes its words
   * (text of ASCII only never has one).
   */
  words(lower: string, otherRun?: (run: string, out: string[]) => void): string {
    const out: string[] = [];
    const n = lower.length;
    let i = 0;
    while (i < n) {
      let code = lower.charCodeAt(i);
      if (!isWordCode(code) && code < 0x80) {
        i += 1;
        continue;
      }
      const start = i;
      let ascii = true;
      // FNV-1a over the run's char codes, as it is scanned.
      let hash = 0x811c9dc5 | 0;
      do {
        if (code >= 0x80) ascii = false;
        hash = Math.imul(hash ^ code, 0x01000193);
        i += 1;
        code = i < n ? lower.charCodeAt(i) : 0;
      } while (i < n && (isWordCode(code) || code >= 0x80));
      if (ascii) out.push(this.form(lower, start, i, hash));
      else if (otherRun) otherRun(lower.slice(start, i), out);
    }
    return out.join(' ');
  }

  private form(lower: string, start: number, end: number, hash: number): string {
    const mask = SLOTS - 1;
    const length = end - start;
    let slot = hash & mask;
    for (let word = this.keys[slot]; word !== undefined; word = this.keys[slot]) {
      if (this.hashes[slot] === hash && word.length === length && sameChars(word, lower, start)) {
        return this.forms[slot] as string;
      }
      slot = (slot + 1) & mask;
    }
    const word = lower.slice(start, end);
    const form = this.analyse(word);
    if (this.entries >= MAX_ENTRIES) {
      this.keys.fill(undefined);
      this.entries = 0;
      slot = hash & mask;
    }
    this.keys[slot] = word;
    this.forms[slot] = form;
    this.hashes[slot] = hash;
    this.entries += 1;
    return form;
  }
}

function sameChars(word: string, text: string, at: number): boolean {
  for (let j = 0; j < word.length; j += 1) if (word.charCodeAt(j) !== text.charCodeAt(at + j)) return false;
  return true;
}
