// RTF text with rtf-to-text: it skips the destinations that are not text (font and colour tables,
// styles, pictures, \* groups), decodes \uN and \'hh escapes and keeps paragraph and tab breaks.
// RTF is 7-bit by definition; bytes above 0x7F in a damaged file are read as Latin-1 and dropped
// or kept as the library sees fit, never refused.
import { readFile } from 'node:fs/promises';
import { stripRtf } from 'rtf-to-text';
import { ExtractionError } from '../../extract/errors.js';
import { normalizeText } from '../text/decode.js';

export async function extractRtfText(filePath: string): Promise<string> {
  const source = (await readFile(filePath)).toString('latin1');
  if (!source.startsWith('{\\rtf'))
    throw new ExtractionError('corrupt', 'the file is not RTF (no "{\\rtf" at its start)');
  // An RTF file ends where its first group closes; a truncated one never does.
  if (!/\}[\s\0]*$/.test(source))
    throw new ExtractionError('corrupt', 'the RTF is truncated (its last group is never closed)');
  return normalizeText(stripRtf(withExplicitParagraphs(source)))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * A backslash before a line break is a paragraph mark (RTF 1.9.1: "\<newline>" is \par), which
 * TextEdit and Cocoa write at every line end; rtf-to-text drops it and runs the lines together.
 * An escaped backslash ("\\") before a line break is text and stays.
 */
function withExplicitParagraphs(source: string): string {
  return source.replace(/(?<!\\)((?:\\\\)*)\\\r?\n/g, '$1\\par\n');
}
