// Detection's check of a file that should be a Word document: an OLE file (encrypted .docx or
// legacy .doc) is told apart, and a ZIP must hold the two parts every Word document has. Only the
// central directory is read; nothing is inflated here (extract.ts does that under its limits).
import yauzl, { type ZipFile } from 'yauzl';
import { describe } from '../describe.js';
import type { Probe } from '../handler.js';
import { isEncryptedOoxml, isOleFile } from '../shared/office.js';
import { nextEntry } from '../shared/zip.js';
import { startsWith } from '../sniff.js';
import { MAX_ZIP_ENTRIES_SCANNED } from './limits.js';

export const ZIP_LOCAL_HEADER = [0x50, 0x4b, 0x03, 0x04];

export async function docxProblem({ head, path }: Probe): Promise<string | null> {
  if (isOleFile(head)) {
    return (await isEncryptedOoxml(path))
      ? 'it is password-protected; remove the password in Word and upload it again'
      : 'it is a legacy Word .doc file; save it as .docx';
  }
  if (!startsWith(head, ZIP_LOCAL_HEADER)) return describe(head);
  return missingDocxParts(path);
}

/** Null when the archive holds both parts every Word document has, else why not. */
async function missingDocxParts(filePath: string): Promise<string | null> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: false, decodeStrings: true });
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  }
  try {
    let contentTypes = false;
    let document = false;
    for (let seen = 0; seen < MAX_ZIP_ENTRIES_SCANNED; seen++) {
      const entry = await nextEntry(zip);
      if (entry === null) break;
      // OPC part names compare case-insensitively.
      const name = entry.fileName.toLowerCase();
      if (name === '[content_types].xml') contentTypes = true;
      if (name === 'word/document.xml') document = true;
      if (contentTypes && document) return null;
    }
    if (!contentTypes) return 'a ZIP archive without [Content_Types].xml, so not an Office document';
    return 'a ZIP archive without word/document.xml, so not a Word document';
  } catch (error) {
    return `a damaged ZIP archive: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    zip.close();
  }
}
