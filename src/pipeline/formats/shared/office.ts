// Tells a password-protected Word document from a legacy .doc. Both are OLE compound files rather
// than ZIP archives; an encrypted .docx (MS-OFFCRYPTO) keeps its ZIP inside an "EncryptedPackage"
// stream, whose name appears in UTF-16 in the file's directory. Users are told which it is,
// because the fixes differ (remove the password, or save as .docx).
import { createReadStream } from 'node:fs';

export const OLE_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ENCRYPTED_PACKAGE = Buffer.from('EncryptedPackage', 'utf16le');

export function isOleFile(head: Uint8Array): boolean {
  return Buffer.from(head.buffer, head.byteOffset, Math.min(head.byteLength, 8)).equals(OLE_SIGNATURE);
}

/** True when an OLE file holds an encrypted OOXML package. Streams the file (directory sectors may sit anywhere). */
export async function isEncryptedOoxml(filePath: string): Promise<boolean> {
  let tail = Buffer.alloc(0);
  for await (const chunk of createReadStream(filePath, { highWaterMark: 256 * 1024 })) {
    const window = Buffer.concat([tail, chunk as Buffer]);
    if (window.includes(ENCRYPTED_PACKAGE)) return true;
    tail = window.subarray(Math.max(0, window.length - ENCRYPTED_PACKAGE.length + 1));
  }
  return false;
}
