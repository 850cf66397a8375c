// How much text one file may give. Two bounds: an absolute one (PipelineThreadOptions.maxTextChars),
// and one relative to the file's size, so that a small upload cannot turn into tens of
// thousands of chunks. A file's text is rarely longer than the file itself (the largest real
// ratio measured is in bench/RESULTS.md); a text many times its file's size comes from repeated
// references (a shared string named by every cell, a table cell spanning a hundred columns) or
// from parts unpacked far beyond their packed size. A floor lets small files give that much
// text whatever their size.
import { ExtractionError } from './errors.js';

/** Characters of text per byte of file, at most (EXTRACT_MAX_TEXT_RATIO). */
export const DEFAULT_MAX_TEXT_RATIO = 16;
/** Characters any file may give whatever its size (EXTRACT_TEXT_FLOOR_CHARS). */
export const DEFAULT_TEXT_FLOOR_CHARS = 4 * 1024 * 1024;

export interface TextLimitSettings {
  /** The most characters any file may give (too_large past it). */
  maxChars: number;
  maxRatio: number;
  floorChars: number;
}

/** One file's bound on its text, and how crossing it fails. */
export interface TextLimit {
  chars: number;
  check(chars: number): void;
}

/**
 * The bound for a file of `fileBytes` bytes. `unpacks`: the format's text comes from parts it
 * unpacks (a ZIP package, an e-mail's attachments), and text past the ratio fails
 * `archive_limits` as the archive's own limits do; other formats fail `too_large`.
 */
export function textLimitOf(fileBytes: number, settings: TextLimitSettings, unpacks: boolean): TextLimit {
  const relative = Math.max(settings.maxRatio * fileBytes, settings.floorChars);
  const chars = Math.min(settings.maxChars, relative);
  const count = (n: number) => n.toLocaleString('en-US');
  return {
    chars,
    check(length: number) {
      if (length <= chars) return;
      if (relative < settings.maxChars) {
        throw new ExtractionError(
          unpacks ? 'archive_limits' : 'too_large',
          `the file's text is longer than ${count(chars)} characters: at most ${settings.maxRatio} per byte of the file (${count(fileBytes)} bytes), or ${count(settings.floorChars)} in all, are read`,
        );
      }
      throw new ExtractionError(
        'too_large',
        `the file's text is longer than ${count(chars)} characters (a table of mostly empty cells?)`,
      );
    },
  };
}
