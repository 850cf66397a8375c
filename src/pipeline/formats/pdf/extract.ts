// PDF text with pdf.js: open a document, extract a range of its pages, and lay each page's text
// items out as lines and paragraphs. Runs inside an extraction worker thread; the pool may give
// different page ranges of one document to different threads.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ExtractionError } from '../../extract/errors.js';
import { ocrEnabled } from '../../ocr/engine.js';
import type { PagedDocument } from '../handler.js';
import { checkDecodedSize } from './decoded-budget.js';
import { drawsAnything, needsOcr, recognizePage } from './ocr-page.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let pdfjsLoading: Promise<PdfJs> | null = null;

// Taken before pdf.js loads: see restoreBuiltins().
const nativePush = Array.prototype.push;
const nativeJsonParse = JSON.parse;

/**
 * Loads pdf.js once per thread. Its "worker" half is imported here and published where pdf.js
 * looks for it, so it runs in this thread instead of being imported again for every document.
 */
function loadPdfJs(): Promise<PdfJs> {
  pdfjsLoading ??= (async () => {
    const [pdfjs, pdfjsWorker] = await Promise.all([
      import('pdfjs-dist/legacy/build/pdf.mjs'),
      import('pdfjs-dist/legacy/build/pdf.worker.mjs'),
    ]);
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = pdfjsWorker;
    restoreBuiltins();
    return pdfjs;
  })();
  return pdfjsLoading;
}

/**
 * The core-js polyfills bundled in pdf.js's legacy build replace two built-ins whose V8 versions
 * they deem not quite to spec: Array.prototype.push (array-likes near 2^53 elements) and
 * JSON.parse (the reviver's source-text argument). pdf.js relies on neither corner, and the
 * JavaScript push alone costs about a tenth of PDF extraction time, for every push in this
 * thread. The additions the build needs (Promise.withResolvers and the like) stay. Worker
 * threads have their own globals, so the rest of the process never saw the swap.
 */
function restoreBuiltins(): void {
  if (Array.prototype.push !== nativePush) {
    Object.defineProperty(Array.prototype, 'push', { value: nativePush, writable: true, configurable: true });
  }
  if (JSON.parse !== nativeJsonParse) {
    Object.defineProperty(JSON, 'parse', { value: nativeJsonParse, writable: true, configurable: true });
  }
}

// Character maps ship inside pdfjs-dist; pdf.js reads them from disk (never the network) when a
// CJK font names a predefined CMap. Without them such text would come out empty.
const CMAP_DIR = `${path.join(path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'cmaps')}${path.sep}`;

export async function openPdf(data: Uint8Array): Promise<PDFDocumentProxy> {
  await checkDecodedSize(data);
  const pdfjs = await loadPdfJs();
  const task = pdfjs.getDocument({
    data,
    // Font programs may contain PostScript that pdf.js would otherwise compile with eval.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    cMapUrl: CMAP_DIR,
    cMapPacked: true,
    // No standardFontDataUrl: font files are only needed to draw glyphs, not to read text.
    stopAtErrors: false,
    verbosity: 0,
  });
  try {
    return await task.promise;
  } catch (error) {
    await task.destroy().catch(() => {});
    throw pdfError(error);
  }
}

/** The PDF at `filePath`, open for its page count and the text of any range of its pages. */
export async function openPagedPdf(filePath: string): Promise<PagedDocument> {
  // Read synchronously: this thread has nothing else to do meanwhile, and in A/B runs in one
  // thread the whole extraction of GeoTopo-komprimiert.pdf took about a tenth less CPU (median)
  // than after fs/promises readFile; the cause was not pinned down.
  // A view of the file's bytes, not a copy (new Uint8Array(buffer) copies): with the copy a large
  // PDF's bytes are held twice for the whole extraction, in a thread with a heap cap.
  const file = readFileSync(filePath);
  const doc = await openPdf(new Uint8Array(file.buffer, file.byteOffset, file.byteLength));
  const ocr = { recognised: 0, skipped: 0 };
  return {
    numPages: doc.numPages,
    pageTexts: (from, to) => extractPdfPages(doc, from, to, ocr),
    // pdf.js keeps each page it has read, and its resources, until the document is cleaned up:
    // ~120 MB of heap after 4,800 pages read in one go, ~30 MB when cleaned up every 100.
    release: () => doc.cleanup().catch(() => {}),
    ocrCounts: () => ({ ...ocr }),
    close: () => doc.destroy(),
  };
}

/**
 * Text of pages `from`..`to` (1-based, inclusive), one string per page. A page without a text
 * layer worth the name that draws something is a scan: OCR reads it, or, with OCR off, it is
 * counted in `ocr.skipped`.
 */
export async function extractPdfPages(
  doc: PDFDocumentProxy,
  from: number,
  to: number,
  ocr: { recognised: number; skipped: number } = { recognised: 0, skipped: 0 },
): Promise<string[]> {
  const texts: string[] = [];
  for (let pageNumber = from; pageNumber <= to; pageNumber++) {
    try {
      const page = await doc.getPage(pageNumber);
      const content = await page.getTextContent();
      let text = layoutPageText(content.items as PdfTextItem[]);
      if (needsOcr(text) && (await drawsAnything(await loadPdfJs(), page))) {
        if (ocrEnabled()) {
          const recognised = await recognizePage(page);
          ocr.recognised++;
          // A stamp or page number in the text layer is also in the picture OCR read.
          if (recognised.replace(/\s/g, '').length > text.replace(/\s/g, '').length) text = recognised;
        } else {
          ocr.skipped++;
        }
      }
      texts.push(text);
      // Fonts and operator lists of this page are not needed again; a long document would
      // otherwise keep every page's in memory.
      page.cleanup();
    } catch (error) {
      if (error instanceof ExtractionError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      // A page that cannot be read means the file is damaged (or truncated): indexing the rest
      // silently would hide that from the user.
      throw new ExtractionError(
        'corrupt',
        `the PDF is damaged: page ${pageNumber} cannot be read (${reason})`,
      );
    }
  }
  return texts;
}

function pdfError(error: unknown): ExtractionError {
  const name = error instanceof Error ? error.name : '';
  const reason = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') return new ExtractionError('encrypted', 'the PDF is password-protected');
  if (name === 'InvalidPDFException') {
    return new ExtractionError('corrupt', `the PDF is damaged or truncated (${reason})`);
  }
  return new ExtractionError('corrupt', `the PDF cannot be read (${reason})`);
}

/** The part of a pdf.js text item the layout uses (marked-content items have no `str`). */
export interface PdfTextItem {
  str?: string;
  /** [a, b, c, d, e, f]: e/f the baseline origin, c/d the vertical extent of the font. */
  transform?: number[];
  hasEOL?: boolean;
  height?: number;
}

interface Line {
  text: string;
  /** Baseline; larger is higher on the page. */
  y: number;
  size: number;
  upright: boolean;
}

/**
 * Lines from pdf.js's end-of-line marks (and from a jump in baseline when a producer leaves them
 * out), paragraphs from larger vertical gaps, and words hyphenated across a line end joined
 * again. Items come in content-stream order, which for the usual producers (TeX, Word,
 * LibreOffice) is reading order, columns included; sorting by position would interleave columns.
 */
export function layoutPageText(items: readonly PdfTextItem[]): string {
  const lines: Line[] = [];
  let current: Line | null = null;
  for (const item of items) {
    const str = item.str;
    if (str === undefined) continue;
    const [a = 1, b = 0, c = 0, d = 1, , f = 0] = item.transform ?? [];
    const size = Math.hypot(c, d) || item.height || 0;
    const upright = Math.abs(b) < 1e-6 && Math.abs(c) < 1e-6 && a > 0;
    if (str !== '') {
      if (current?.upright && upright && Math.abs(f - current.y) > Math.max(current.size, size) * 0.6) {
        lines.push(current);
        current = null;
      }
      if (current) {
        current.text += str;
        current.size = Math.max(current.size, size);
      } else {
        current = { text: str, y: f, size, upright };
      }
    }
    if (item.hasEOL && current) {
      lines.push(current);
      current = null;
    }
  }
  if (current) lines.push(current);

  const kept = lines
    .map((line) => ({ ...line, text: cleanLine(line.text) }))
    .filter((line) => line.text !== '');
  if (kept.length === 0) return '';

  const leading = typicalLeading(kept);
  let out = kept[0]!.text;
  for (let i = 1; i < kept.length; i++) {
    const prev = kept[i - 1]!;
    const line = kept[i]!;
    const dy = prev.y - line.y;
    const usual = Math.max(leading, 1.2 * Math.max(prev.size, line.size));
    // Moving up the page means a new column or a float: a new block either way.
    const paragraph = prev.upright && line.upright && (dy > 1.45 * usual || dy < -0.5 * line.size);
    if (paragraph) {
      out += `\n\n${line.text}`;
    } else if (/\p{L}[-\u2010\u00ad]$/u.test(out) && /^\p{Ll}/u.test(line.text)) {
      out = out.slice(0, -1) + line.text;
    } else {
      out += `\n${line.text}`;
    }
  }
  return out;
}

/** Median distance between consecutive baselines that look like lines of one paragraph. */
function typicalLeading(lines: Line[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < lines.length; i++) {
    const dy = lines[i - 1]!.y - lines[i]!.y;
    const size = Math.max(lines[i - 1]!.size, lines[i]!.size);
    if (dy > 0.5 * size && dy < 2.5 * size) gaps.push(dy);
  }
  if (gaps.length === 0) return 0;
  gaps.sort((x, y) => x - y);
  return gaps[Math.floor(gaps.length / 2)]!;
}

/** Control characters stand for glyphs without a Unicode mapping; they carry no text. */
function cleanLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f\ufffe\uffff]/g, '').trim();
}
