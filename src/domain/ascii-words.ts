// The words of a text, each turned into its indexed form, without making a string per word
// where a word is plain ASCII (most words): such a word is looked up by its position in the
// lower-cased text, so a word seen before (text repeats its words) costs a hash and a comparison,
// not a substring, a regex test and a map lookup. Only a word not yet in the table is cut out and
// analysed; a run holding other characters is cut out and handed to the caller's analysis.

/**
 * A table starts small and grows fourfold whenever a third of its slots are taken, up to this
 * many slots (a power of two); full at that size, it is cleared and fills again.
 */
const MIN_SLOTS = 1 << 11;
const MAX_SLOTS = 1 << 17;

const isWordCode = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

/**
 * A table from a word of lower-case ASCII letters and digits to its analysed form, for one
 * analysis; bounded: at its largest size a full table is cleared, which needs no bookkeeping.
 */
export class AsciiWordTable {
  private keys: Array<string | undefined> = new Array<string | undefined>(MIN_SLOTS);
  private forms: string[] = new Array<string>(MIN_SLOTS);
  private hashes = new Int32Array(MIN_SLOTS);
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
    const length = end - start;
    let mask = this.keys.length - 1;
    let slot = hash & mask;
    for (let word = this.keys[slot]; word !== undefined; word = this.keys[slot]) {
      if (this.hashes[slot] === hash && word.length === length && sameChars(word, lower, start)) {
        return this.forms[slot] as string;
      }
      slot = (slot + 1) & mask;
    }
    const word = lower.slice(start, end);
    const form = this.analyse(word);
    if (3 * (this.entries + 1) > this.keys.length) {
      this.resize();
      mask = this.keys.length - 1;
      slot = hash & mask;
      while (this.keys[slot] !== undefined) slot = (slot + 1) & mask;
    }
    this.keys[slot] = word;
    this.forms[slot] = form;
    this.hashes[slot] = hash;
    this.entries += 1;
    return form;
  }

  /** Four times the slots, the entries placed again; at the largest size, empty instead. */
  private resize(): void {
    const { keys, forms, hashes } = this;
    const slots = keys.length * 4;
    if (slots > MAX_SLOTS) {
      keys.fill(undefined);
      forms.fill('');
      this.entries = 0;
      return;
    }
    this.keys = new Array<string | undefined>(slots);
    this.forms = new Array<string>(slots);
    this.hashes = new Int32Array(slots);
    const mask = slots - 1;
    for (let from = 0; from < keys.length; from += 1) {
      const key = keys[from];
      if (key === undefined) continue;
      let slot = (hashes[from] as number) & mask;
      while (this.keys[slot] !== undefined) slot = (slot + 1) & mask;
      this.keys[slot] = key;
      this.forms[slot] = forms[from] as string;
      this.hashes[slot] = hashes[from] as number;
    }
  }
}

function sameChars(word: string, text: string, at: number): boolean {
  for (let j = 0; j < word.length; j += 1) if (word.charCodeAt(j) !== text.charCodeAt(at + j)) return false;
  return true;
}
