// Character accuracy of OCR output against a ground-truth text, as OCR evaluations report it:
// 1 − (Levenshtein edit distance ÷ ground-truth length), on both texts with runs of whitespace
// folded to one space (line breaks in a scan say nothing about its characters). Shared by the OCR
// benchmark and the OCR tests.

export function foldWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** 1 for a perfect reading; 0 (never below) when as many edits as characters are needed. */
export function characterAccuracy(recognised: string, truth: string): number {
  const a = foldWhitespace(recognised);
  const b = foldWhitespace(truth);
  if (b.length === 0) return a.length === 0 ? 1 : 0;
  return Math.max(0, 1 - editDistance(a, b) / b.length);
}

/** Levenshtein distance over UTF-16 code units, two rows at a time. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}
