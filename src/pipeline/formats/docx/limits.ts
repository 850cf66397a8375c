// The limits a Word document's ZIP container is held to: those of every ZIP-based format
// (shared/archive.ts), checked by extract.ts before mammoth sees the archive, and by detection
// when it reads the directory.
import { ARCHIVE_LIMITS, type ArchiveLimits } from '../shared/archive.js';

export type { ArchiveLimits };

export const DOCX_LIMITS: ArchiveLimits = ARCHIVE_LIMITS;

/** Past this many entries the archive is no Office document we would accept anyway (detection). */
export const MAX_ZIP_ENTRIES_SCANNED = 100_000;
