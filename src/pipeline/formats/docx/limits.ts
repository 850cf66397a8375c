// The limits a Word document's ZIP container is held to (README, failure codes): checked by
// extract.ts before mammoth sees the archive, and by detection when it reads the directory.

export interface ArchiveLimits {
  maxEntries: number;
  /** Inflated bytes per compressed byte, per entry. */
  maxEntryRatio: number;
  /**
   * Entries that inflate to less than this are not held to the ratio: no bomb fits in it, and
   * small, very repetitive XML parts legitimately compress beyond 100×. Apache POI's
   * ZipSecureFile uses the same 100 KiB grace for the same reason. The total cap still counts
   * every byte.
   */
  ratioGraceBytes: number;
  maxTotalBytes: number;
}

export const DOCX_LIMITS: ArchiveLimits = {
  maxEntries: 1_000,
  maxEntryRatio: 100,
  ratioGraceBytes: 100 * 1024,
  maxTotalBytes: 200 * 1024 * 1024,
};

/** Past this many entries the archive is no Word document we would accept anyway (detection). */
export const MAX_ZIP_ENTRIES_SCANNED = 100_000;
