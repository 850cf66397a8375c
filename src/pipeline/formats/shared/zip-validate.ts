// Detection's check of a file that should be a ZIP-based format (pptx, xlsx, odt, epub): an OLE
// file (encrypted Office package or legacy binary file) is told apart, and the archive must hold
// the parts every file of the format has. Only the central directory is read; nothing is inflated
// here (shared/archive.ts does that under its limits, in a worker thread).
import yauzl, { type ZipFile } from 'yauzl';
import { describe } from '../describe.js';
import type { Probe } from '../handler.js';
import { startsWith } from '../sniff.js';
import { isEncryptedOoxml, isOleFile } from './office.js';
import { nextEntry } from './zip.js';

const ZIP_LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];
/** Past this many entries the archive is nothing we would accept anyway. */
const MAX_ENTRIES_SCANNED = 100_000;

export interface PackageShape {
  /** Lowercase names of the parts every file of the format has. */
  required: readonly string[];
  /** "a PowerPoint presentation", for "a ZIP archive without ppt/presentation.xml, so not …". */
  aKind: string;
  /** Said of an OLE file that is not an encrypted package: "it is a legacy PowerPoint .ppt file; save it as .pptx". */
  legacy: string;
}

export async function packageProblem({ head, path }: Probe, shape: PackageShape): Promise<string | null> {
  if (isOleFile(head)) {
    return (await isEncryptedOoxml(path))
      ? 'it is password-protected; remove the password and upload it again'
      : shape.legacy;
  }
  if (!startsWith(head, ZIP_LOCAL_HEADER)) return describe(head);
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false, decodeStrings: true });
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    const missing = new Set(shape.required);
    for (let seen = 0; seen < MAX_ENTRIES_SCANNED && missing.size > 0; seen++) {
      const entry = await nextEntry(zip);
      if (entry === null) break;
      missing.delete(entry.fileName.toLowerCase());
    }
    if (missing.size === 0) return null;
    return `a ZIP archive without ${[...missing][0]}, so not ${shape.aKind}`;
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    zip.close();
  }
}
