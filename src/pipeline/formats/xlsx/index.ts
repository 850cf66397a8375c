// .xlsx: Excel workbooks (Office Open XML). Each sheet becomes a "## name" heading and a Markdown
// table, its cells as Excel last showed them (formulas' cached values); read with saxes as the
// worksheets inflate, after the archive limits every ZIP-based format is held to (extract.ts).
import type { FormatHandler } from '../handler.js';
import { zipKindOf } from '../shared/zip-kind.js';
import { packageProblem } from '../shared/zip-validate.js';

export const xlsxFormat: FormatHandler = {
  kind: 'binary',
  unpacks: true,
  sniff: ({ head }) => zipKindOf(head) === 'xlsx',
  validate: (probe) =>
    packageProblem(probe, {
      required: ['[content_types].xml', 'xl/workbook.xml'],
      aKind: 'an Excel workbook',
      legacy: 'it is a legacy Excel .xls file; save it as .xlsx',
    }),
  loadExtractor: async () => {
    const { extractXlsxText, xlsxTextPieces } = await import('./extract.js');
    return { paged: false, extractText: extractXlsxText, textPieces: xlsxTextPieces };
  },
};
