// The OCR side of PDF extraction: which pages need it, and reading them. A page goes to OCR only
// when its text layer is (almost) empty and it draws something, so a PDF with text costs one
// character count per page more than before and nothing else.
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { MAX_OCR_PIXELS, OCR_RENDER_DPI, recognizeGrayBitmap } from '../../ocr/engine.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

/**
 * Below this many non-space characters a page's text layer cannot be its content: a printed line
 * alone holds 60 to 90. What scanners and archives do add to a scanned page is shorter: a page
 * number, a Bates stamp ("ABC-000123"), "Scanned by CamScanner" (19). A page of real text this
 * short (a title page, a chapter's last line) is OCRed too, and keeps its own text unless OCR
 * reads more.
 */
export const MIN_TEXT_LAYER_CHARS = 32;

export function needsOcr(pageText: string): boolean {
  let count = 0;
  for (const ch of pageText) {
    if (!/\s/.test(ch) && ++count >= MIN_TEXT_LAYER_CHARS) return false;
  }
  return true;
}

/** Operators that put pixels on a page; a page with none of them is blank, and OCR is skipped. */
function drawingOps(pdfjs: PdfJs): Set<number> {
  const { OPS } = pdfjs;
  return new Set([
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageXObjectRepeat,
    OPS.paintImageMaskXObject,
    OPS.paintImageMaskXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
    OPS.paintSolidColorImageMask,
    OPS.constructPath,
    OPS.rawFillPath,
    OPS.shadingFill,
  ]);
}

export async function drawsAnything(pdfjs: PdfJs, page: PDFPageProxy): Promise<boolean> {
  const ops = drawingOps(pdfjs);
  const list = await page.getOperatorList();
  return list.fnArray.some((fn) => ops.has(fn));
}

/**
 * Renders the page at OCR_RENDER_DPI (less if that would exceed MAX_OCR_PIXELS: a poster-sized
 * page is read at a lower resolution rather than refused) and recognises it.
 */
export async function recognizePage(page: PDFPageProxy): Promise<string> {
  const { createCanvas } = await import('@napi-rs/canvas');
  const natural = page.getViewport({ scale: 1 });
  const wanted = OCR_RENDER_DPI / 72;
  const scale = Math.min(wanted, Math.sqrt(MAX_OCR_PIXELS / (natural.width * natural.height)));
  const viewport = page.getViewport({ scale });
  const width = Math.max(1, Math.floor(viewport.width));
  const height = Math.max(1, Math.floor(viewport.height));
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  // Scans are dark on light; a transparent page would reach Tesseract as black.
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  type RenderParameters = Parameters<PDFPageProxy['render']>[0];
  await page.render({
    canvas: canvas as unknown as RenderParameters['canvas'],
    canvasContext: context as unknown as RenderParameters['canvasContext'],
    viewport,
  }).promise;
  const rgba = context.getImageData(0, 0, width, height).data;
  // Released before recognition: Tesseract needs only the grey copy.
  canvas.width = 0;
  canvas.height = 0;
  const gray = new Uint8Array(width * height);
  for (let i = 0, j = 0; j < gray.length; i += 4, j++) {
    gray[j] = (rgba[i]! * 77 + rgba[i + 1]! * 150 + rgba[i + 2]! * 29) >> 8;
  }
  return recognizeGrayBitmap(width, height, gray, Math.round(scale * 72));
}
