// How a PDF's pages are divided among threads that extract them side by side.

export type PageRange = { from: number; to: number };

/**
 * A helper thread first parses the whole document structure and the fonts of its pages again, so
 * a range shorter than this costs more than it saves.
 */
const PDF_MIN_PAGES_PER_PART = 8;

/** The ranges of a PDF of `numPages` pages, with `helpers` threads free beside the first. */
export function pdfParts(numPages: number, helpers: number): PageRange[] {
  const parts = Math.max(1, Math.min(1 + helpers, Math.floor(numPages / PDF_MIN_PAGES_PER_PART)));
  return splitPages(numPages, parts);
}

/** `parts` contiguous ranges covering pages 1..numPages, sizes differing by at most one. */
export function splitPages(numPages: number, parts: number): PageRange[] {
  if (numPages === 0) return [{ from: 1, to: 0 }];
  const ranges: PageRange[] = [];
  let from = 1;
  for (let i = 0; i < parts; i++) {
    const size = Math.floor(numPages / parts) + (i < numPages % parts ? 1 : 0);
    ranges.push({ from, to: from + size - 1 });
    from += size;
  }
  return ranges;
}
