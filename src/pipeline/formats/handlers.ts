// Format id → its implementation: detection (extract/detect.ts) and extraction (extract/worker.ts)
// look a format up here. The ids, names, media types and extensions are in domain/formats.ts;
// the type below makes a format listed there without a line here fail to compile.
import type { FormatId } from '../../domain/formats.js';
import { csvFormat } from './csv/index.js';
import { docxFormat } from './docx/index.js';
import { emlFormat } from './eml/index.js';
import { epubFormat } from './epub/index.js';
import type { FormatHandler } from './handler.js';
import { htmlFormat } from './html/index.js';
import { imageFormat } from './image/index.js';
import { mdFormat } from './md/index.js';
import { odtFormat } from './odt/index.js';
import { pdfFormat } from './pdf/index.js';
import { pptxFormat } from './pptx/index.js';
import { rtfFormat } from './rtf/index.js';
import { txtFormat } from './txt/index.js';
import { xlsxFormat } from './xlsx/index.js';

export const FORMAT_HANDLERS: { readonly [F in FormatId]: FormatHandler } = {
  pdf: pdfFormat,
  docx: docxFormat,
  txt: txtFormat,
  md: mdFormat,
  html: htmlFormat,
  png: imageFormat('PNG'),
  jpeg: imageFormat('JPEG'),
  tiff: imageFormat('TIFF'),
  pptx: pptxFormat,
  xlsx: xlsxFormat,
  csv: csvFormat,
  odt: odtFormat,
  epub: epubFormat,
  rtf: rtfFormat,
  eml: emlFormat,
};

/** What a file is when neither its name, a declared type nor its bytes say otherwise. */
export const FALLBACK_FORMAT: FormatId = 'txt';
