// detectFormat: the format comes from the bytes, the name and a server's Content-Type only choose
// among what the bytes allow, and every refusal says what the file really is.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/pipeline/extract/index.js';
import { itWithCorpus } from '../helpers/shared.js';
import {
  DOCX_DIR,
  documentXml,
  docxEntries,
  FIXTURES,
  makeTempDir,
  makeZip,
  oleFile,
  PDF_DIR,
  type TempDir,
} from './extract-support.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const GIF = Buffer.from(
  '47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b',
  'hex',
);
const JPEG = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');
const HTML = '<!DOCTYPE html>\n<html><head><title>Hi</title></head><body><p>Hello</p></body></html>\n';

let tmp: TempDir;
beforeAll(async () => {
  tmp = await makeTempDir();
});
afterAll(async () => {
  await tmp.remove();
});

async function detect(
  name: string,
  data: Buffer | string,
  filename: string | null = name,
  declared?: string | null,
) {
  const file = await tmp.write(`${Math.random().toString(36).slice(2)}-${path.basename(name)}`, data);
  return detectFormat({ path: file, filename, declaredContentType: declared ?? null });
}

/** A PDF and a DOCX made by real tools that live in the repository (test/fixtures/extract). */
const FIXTURE_PDF = path.join(FIXTURES, 'hyphenation.pdf');
const FIXTURE_DOCX = path.join(FIXTURES, 'pandoc-notes.docx');

describe('detectFormat on real files', () => {
  it('accepts the repository’s groff PDF and pandoc DOCX under their own names', async () => {
    expect(await detectFormat({ path: FIXTURE_PDF, filename: 'hyphenation.pdf' })).toEqual({
      ok: true,
      format: 'pdf',
    });
    expect(await detectFormat({ path: FIXTURE_DOCX, filename: 'pandoc-notes.docx' })).toEqual({
      ok: true,
      format: 'docx',
    });
  });

  itWithCorpus('accepts every corpus PDF and DOCX under its own name', async () => {
    for (const name of [
      'minimal-document.pdf',
      'GeoTopo-komprimiert.pdf',
      'libreoffice-writer-password.pdf',
    ]) {
      expect(await detectFormat({ path: path.join(PDF_DIR, name), filename: name })).toEqual({
        ok: true,
        format: 'pdf',
      });
    }
    for (const name of ['tables.docx', 'strict-format.docx', 'empty.docx', 'utf8-bom.docx']) {
      expect(await detectFormat({ path: path.join(DOCX_DIR, name), filename: name })).toEqual({
        ok: true,
        format: 'docx',
      });
    }
  });

  it('refuses a PDF named .docx and a DOCX named .pdf, saying what they are', async () => {
    const pdf = await readFile(FIXTURE_PDF);
    const docx = await readFile(FIXTURE_DOCX);
    expect(await detect('report.docx', pdf)).toEqual({
      ok: false,
      detail: 'report.docx is not a DOCX (starts with PDF signature)',
    });
    expect(await detect('report.pdf', docx)).toEqual({
      ok: false,
      detail: 'report.pdf is not a PDF (starts with ZIP signature)',
    });
  });
});

describe('detectFormat refusals', () => {
  it('a PNG renamed .pdf', async () => {
    expect(await detect('file.pdf', PNG)).toEqual({
      ok: false,
      detail: 'file.pdf is not a PDF (starts with PNG signature)',
    });
  });

  it('an HTML page renamed .docx', async () => {
    expect(await detect('letter.docx', HTML)).toEqual({
      ok: false,
      detail: 'letter.docx is not a DOCX (it is an HTML page)',
    });
  });

  it('a password-protected .docx and a legacy .doc renamed .docx, each with its own advice', async () => {
    expect(await detect('secret.docx', oleFile(true))).toEqual({
      ok: false,
      detail:
        'secret.docx is not a DOCX (it is password-protected; remove the password in Word and upload it again)',
    });
    expect(await detect('old.docx', oleFile(false))).toEqual({
      ok: false,
      detail: 'old.docx is not a DOCX (it is a legacy Word .doc file; save it as .docx)',
    });
  });

  it('a ZIP archive that is not a Word document', async () => {
    const zip = makeZip([{ name: 'readme.txt', data: 'hello' }]);
    const result = await detect('notes.docx', zip);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.detail).toMatch(
      /^notes\.docx is not a DOCX \(a ZIP archive without \[Content_Types\]\.xml/,
    );
  });

  it('a 0-byte file, named or not', async () => {
    expect(await detect('empty.pdf', Buffer.alloc(0))).toEqual({ ok: false, detail: 'empty.pdf is empty' });
    expect(await detect('download', Buffer.alloc(0), null, 'application/pdf')).toEqual({
      ok: false,
      detail: 'file is empty',
    });
  });

  it('an unknown extension, mentioning what the bytes are', async () => {
    const result = await detect('anim.gif', GIF);
    expect(result).toEqual({
      ok: false,
      detail:
        'anim.gif has an unsupported file type (.gif, starts with GIF signature); supported: .pdf, .docx, .txt, .md, .html, .pptx, .xlsx, .csv, .odt, .epub, .rtf, .eml, .png, .jpg, .tiff',
    });
    expect((await detect('old.doc', 'text')).ok).toBe(false);
    // Names that are also properties of every JavaScript object are just unknown extensions.
    expect((await detect('x.constructor', 'text')).ok).toBe(false);
    expect((await detect('x', 'text', null, 'constructor')).ok).toBe(true);
  });

  it('binary bytes named .txt or .md', async () => {
    expect(await detect('notes.txt', PNG)).toEqual({
      ok: false,
      detail: 'notes.txt is not text (starts with PNG signature)',
    });
    const binary = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 32));
    expect(await detect('notes.md', binary)).toEqual({
      ok: false,
      detail: 'notes.md is not Markdown text (it contains binary data)',
    });
  });

  it('text that is not UTF-8 (Latin-1 "café"), with the offset', async () => {
    const result = await detect('menu.txt', Buffer.from('Le café est prêt.\n', 'latin1'));
    expect(result).toEqual({
      ok: false,
      detail: 'menu.txt is not text (not UTF-8: invalid byte 0xe9 at offset 6; save it as UTF-8)',
    });
  });

  it('junk before %PDF- that is another format', async () => {
    const pdf = await readFile(FIXTURE_PDF);
    expect((await detect('polyglot.pdf', Buffer.concat([PNG, pdf]))).ok).toBe(false);
  });
});

describe('detectFormat acceptances', () => {
  it('text in UTF-8 (with or without BOM) and UTF-16 with a BOM', async () => {
    const text = 'Grüße aus Köln — naïve café ✓\n'.repeat(20);
    expect(await detect('a.txt', text)).toEqual({ ok: true, format: 'txt' });
    expect(await detect('a.md', `\ufeff# Title\n\n${text}`)).toEqual({ ok: true, format: 'md' });
    expect(
      await detect('b.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])),
    ).toEqual({
      ok: true,
      format: 'txt',
    });
    const be = Buffer.from(text, 'utf16le').swap16();
    expect(await detect('c.markdown', Buffer.concat([Buffer.from([0xfe, 0xff]), be]))).toEqual({
      ok: true,
      format: 'md',
    });
  });

  it('a multi-byte character cut by the 64 KiB window is not "invalid UTF-8"', async () => {
    // 65,535 ASCII bytes, then "é" (2 bytes) straddling the 65,536-byte head.
    const text = `${'a'.repeat(65_535)}é${'b'.repeat(100)}`;
    expect(await detect('long.txt', text)).toEqual({ ok: true, format: 'txt' });
  });

  it('a text file with a stray NUL is still text (extraction drops it)', async () => {
    expect(await detect('nul.txt', `hello\u0000world ${'x'.repeat(500)}`)).toEqual({
      ok: true,
      format: 'txt',
    });
  });

  it('a PDF with a little leading junk (as Acrobat and pdf.js accept)', async () => {
    const pdf = await readFile(FIXTURE_PDF);
    expect(await detect('junk.pdf', Buffer.concat([Buffer.from('\r\n\r\n'), pdf]))).toEqual({
      ok: true,
      format: 'pdf',
    });
  });

  it('a .docx needs [Content_Types].xml and word/document.xml, in any letter case', async () => {
    const zip = makeZip(docxEntries(documentXml(['hi'])));
    expect(await detect('ok.docx', zip)).toEqual({ ok: true, format: 'docx' });
    const upper = makeZip([
      { name: '[CONTENT_TYPES].XML', data: 'x' },
      { name: 'Word/Document.xml', data: 'x' },
    ]);
    expect(await detect('upper.docx', upper)).toEqual({ ok: true, format: 'docx' });
  });
});

describe('detectFormat for URL downloads (no filename, a declared Content-Type)', () => {
  it('maps declared text types, with charset parameters', async () => {
    expect(await detect('x', HTML, null, 'text/html; charset=utf-8')).toEqual({ ok: true, format: 'html' });
    expect(await detect('x', '# Heading\n\nBody', null, 'text/markdown')).toEqual({ ok: true, format: 'md' });
    expect(await detect('x', 'plain words', null, 'text/plain')).toEqual({ ok: true, format: 'txt' });
  });

  it('lets the bytes decide when the type is generic or wrong', async () => {
    const pdf = await readFile(FIXTURE_PDF);
    const docx = await readFile(FIXTURE_DOCX);
    expect(await detect('x', pdf, null, 'application/octet-stream')).toEqual({ ok: true, format: 'pdf' });
    expect(await detect('x', pdf, null, 'text/html')).toEqual({ ok: true, format: 'pdf' });
    expect(await detect('x', docx, null, 'application/octet-stream')).toEqual({ ok: true, format: 'docx' });
    expect(await detect('x', HTML, null, 'application/octet-stream')).toEqual({ ok: true, format: 'html' });
    expect(await detect('x', 'just words', null, null)).toEqual({ ok: true, format: 'txt' });
  });

  it('refuses a "PDF" that is really an HTML page (a login wall), and images', async () => {
    expect(await detect('x', HTML, null, 'application/pdf')).toEqual({
      ok: false,
      detail: 'file is not a PDF (it is an HTML page)',
    });
    expect(await detect('x', GIF, null, 'image/gif')).toEqual({
      ok: false,
      detail: 'file is not a supported format (starts with GIF signature)',
    });
  });

  it('takes PNG, JPEG and TIFF images (for OCR) by name, declared type or signature, and checks the bytes', async () => {
    expect(await detect('scan.png', PNG)).toEqual({ ok: true, format: 'png' });
    expect(await detect('photo.JPG', JPEG)).toEqual({ ok: true, format: 'jpeg' });
    expect(await detect('x', PNG, null, 'image/png')).toEqual({ ok: true, format: 'png' });
    expect(await detect('x', JPEG, null, 'image/jpeg')).toEqual({ ok: true, format: 'jpeg' });
    expect(await detect('x', Buffer.from('49492a0008000000', 'hex'), null, 'image/tiff')).toEqual({
      ok: true,
      format: 'tiff',
    });
    expect(await detect('x', JPEG, null, null)).toEqual({ ok: true, format: 'jpeg' });
    expect(await detect('scan.png', JPEG)).toEqual({
      ok: false,
      detail: 'scan.png is not a PNG image (starts with JPEG signature)',
    });
  });

  it('a page quoting "%PDF-" or starting with "PK" is still text', async () => {
    const page =
      '<!DOCTYPE html><html><body><p>Every PDF starts with %PDF-1.7 and a newline.</p></body></html>';
    expect(await detect('x', page, null, 'text/html')).toEqual({ ok: true, format: 'html' });
    expect(await detect('x', page, null, null)).toEqual({ ok: true, format: 'html' });
    expect(await detect('README', 'PKI basics: certificates and keys.', 'README')).toEqual({
      ok: true,
      format: 'txt',
    });
    expect(await detect('fake.pdf', page)).toEqual({
      ok: false,
      detail: 'fake.pdf is not a PDF (it is an HTML page)',
    });
  });

  it('uses the URL path extension when there is one, the Content-Type when it is unknown', async () => {
    expect(await detect('page.html', HTML, 'page.html', 'text/plain')).toEqual({ ok: true, format: 'html' });
    expect(await detect('article.php', HTML, 'article.php', 'text/html')).toEqual({
      ok: true,
      format: 'html',
    });
    expect(await detect('paper.pdf', HTML, 'paper.pdf', 'text/html')).toEqual({
      ok: false,
      detail: 'paper.pdf is not a PDF (it is an HTML page)',
    });
  });
});
