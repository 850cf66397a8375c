// DOCX extraction: the corpus documents give their text, nothing is ever fetched, and hostile
// archives built here at run time (bombs, 10,001 entries, duplicate names, DTDs) stop at the
// archive limits docs/API.md states with the code a user would see.
import { createHook } from 'node:async_hooks';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import mammoth from 'mammoth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineThreads,
  ExtractionError,
  type PipelineThreads,
} from '../../src/pipeline/extract/index.js';
import { checkDocxArchive, extractDocxText } from '../../src/pipeline/formats/docx/extract.js';
import { DOCX_LIMITS } from '../../src/pipeline/formats/docx/limits.js';
import { describeWithCorpus, itWithCorpus } from '../helpers/shared.js';
import {
  type Canary,
  DOCX_DIR,
  deflatedZeros,
  documentXml,
  docxEntries,
  FIXTURES,
  makeTempDir,
  makeZip,
  oleFile,
  positionsInOrder,
  startCanary,
  type TempDir,
  type ZipEntrySpec,
} from './extract-support.js';

let extractor: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  extractor = createPipelineThreads({ maxWorkers: 2, timeoutMs: 30_000, maxHeapMb: 512, pdfMaxPages: 5_000 });
  tmp = await makeTempDir();
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

let counter = 0;
async function writeZip(entries: ZipEntrySpec[]): Promise<string> {
  return tmp.write(`doc-${counter++}.docx`, makeZip(entries));
}

async function failure(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExtractionError);
  return error as ExtractionError;
}

describeWithCorpus('corpus DOCX files (mammoth test data)', () => {
  const expected: Record<string, string> = {
    'single-paragraph.docx': 'Walking on imported air',
    'simple-list.docx': 'Apple\n\nBanana',
    // Tables come out as Markdown tables, the first row as the header.
    'tables.docx':
      'Above\n\n| Top left | Top right |\n| --- | --- |\n| Bottom left | Bottom right |\n\nBelow',
    'text-box.docx': 'Datum plane',
    'strict-format.docx': 'Test',
    'utf8-bom.docx': 'This XML has a byte order mark.',
    // Comments are not the document's text; footnotes and endnotes follow the body, without the
    // "[1]" and "↑" links between them.
    'comments.docx': 'Ouch.',
    'footnotes.docx': 'Ouch.\n\nA tachyon walks into a bar.\n\nFin.',
    'endnotes.docx': 'Ouch.\n\nA tachyon walks into a bar.\n\nFin.',
    'empty.docx': '',
    'external-picture.docx': '',
  };
  it.each(Object.entries(expected))('%s', async (name, text) => {
    const result = await extractor.extract(path.join(DOCX_DIR, name), 'docx');
    expect(result).toEqual({
      text,
      pages: null,
      format: 'docx',
      contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      ocrPages: null,
    });
  });
});

describe('nothing is fetched', () => {
  itWithCorpus('external-picture.docx opens no socket and resolves no name', async () => {
    // Run in this thread (the worker thread runs the same function) so the hook sees everything.
    const opened: string[] = [];
    // Node makes the stdio streams (pipes here) the first time they are used, and stream.pipe()
    // looks at them: made now, they are not mistaken for something the extraction opened.
    void [process.stdout, process.stderr];
    const hook = createHook({
      init(_id, type) {
        if (/TCP|UDP|PIPE|GETADDRINFO|GETNAMEINFO|HTTP|TLS|QUERY/.test(type)) opened.push(type);
      },
    });
    hook.enable();
    try {
      expect(await extractDocxText(path.join(DOCX_DIR, 'external-picture.docx'))).toBe('');
    } finally {
      hook.disable();
    }
    expect(opened).toEqual([]);
  });

  it('linked images, hyperlinks and templates pointing at a listener are never requested', async () => {
    const canary: Canary = await startCanary();
    try {
      const rels = `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rIdImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="${canary.url}/picture.png" TargetMode="External"/>
<Relationship Id="rIdLink" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="${canary.url}/page" TargetMode="External"/>
<Relationship Id="rIdTpl" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/attachedTemplate" Target="${canary.url}/template.dotm" TargetMode="External"/>
</Relationships>`;
      const body = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:v="urn:schemas-microsoft-com:vml"><w:body>
<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>Linked words</w:t></w:r></w:hyperlink></w:p>
<w:p><w:r><w:pict><v:shape><v:imagedata r:id="rIdImg"/></v:shape></w:pict></w:r><w:r><w:t>After the picture</w:t></w:r></w:p>
</w:body></w:document>`;
      const file = await writeZip(docxEntries(body, [{ name: 'word/_rels/document.xml.rels', data: rels }]));
      const result = await extractor.extract(file, 'docx');
      expect(result.text).toBe('Linked words\n\nAfter the picture');
      expect(canary.connections()).toBe(0);
    } finally {
      await canary.close();
    }
  });
});

describe('a DOCX made by pandoc (test/fixtures/extract/pandoc-notes.docx)', () => {
  it('keeps headings, list items, the table (as a Markdown table) and umlauts, in order', async () => {
    const result = await extractor.extract(path.join(FIXTURES, 'pandoc-notes.docx'), 'docx');
    expect(
      positionsInOrder(result.text, [
        'Release Notes',
        'Docindex ingests PDF, DOCX, Markdown and web pages.',
        'Known Limits',
        'Archives stop at one thousand entries.',
        'Uploads stop at one hundred megabytes.',
        '| Format | Extractor |',
        '| PDF | pdf.js |',
        '| DOCX | mammoth |',
        'Grüße aus Köln, naïve café.',
      ]),
    ).not.toContain(-1);
    expect(result.text).toMatch(/^Release Notes\n\n/);
    expect(result.text).toContain(
      '| Format | Extractor |\n| --- | --- |\n| PDF | pdf.js |\n| DOCX | mammoth |',
    );
  });
});

describe('archive limits (before mammoth sees the file)', () => {
  it('keeps the archive limits docs/API.md states', () => {
    expect(DOCX_LIMITS).toMatchObject({
      maxEntries: 1_000,
      maxEntryRatio: 100,
      maxTotalBytes: 200 * 1024 * 1024,
    });
  });

  it('a zip bomb (~1 MB deflated, 1 GiB inflated) → archive_limits, stopping early', async () => {
    const bomb = deflatedZeros(1024);
    expect(bomb.length).toBeLessThan(1.2 * 1024 * 1024);
    const file = await writeZip(
      docxEntries(documentXml(['x']), [
        { name: 'word/media/zeros.bin', deflated: bomb, claimedSize: 1024 ** 3 },
      ]),
    );
    const error = await failure(extractor.extract(file, 'docx'));
    expect(error.code).toBe('archive_limits');
    expect(error.message).toBe(
      'the DOCX archive entry "word/media/zeros.bin" inflates more than 100× (a ZIP bomb?)',
    );
    // In this thread, to see the cost: inflating the whole GiB takes seconds of CPU; stopping at
    // the ratio takes a few milliseconds.
    const cpu = process.cpuUsage();
    await expect(checkDocxArchive(file)).rejects.toMatchObject({ code: 'archive_limits' });
    const used = process.cpuUsage(cpu);
    expect((used.user + used.system) / 1000).toBeLessThan(250);
  });

  it('a bomb whose headers claim a small size is caught by what inflates, not by the claim', async () => {
    const file = await writeZip(
      docxEntries(documentXml(['x']), [
        { name: 'word/media/tiny.bin', deflated: deflatedZeros(256), claimedSize: 1000 },
      ]),
    );
    expect((await failure(extractor.extract(file, 'docx'))).code).toBe('archive_limits');
  });

  it('more than 200 MB in total, each entry under the ratio → archive_limits (limit scaled down to 1 MiB here)', async () => {
    // Pseudo-random letters compress about 1.6×: far under the ratio, so only the total can stop them.
    let seed = 1;
    const letters = () =>
      Buffer.from(
        Array.from({ length: 400 * 1024 }, () => {
          seed = (seed * 48271) % 2147483647;
          return 97 + (seed % 26);
        }),
      );
    const file = await writeZip(
      docxEntries(documentXml(['x']), [
        { name: 'word/media/a.bin', data: letters() },
        { name: 'word/media/b.bin', data: letters() },
        { name: 'word/media/c.bin', data: letters() },
      ]),
    );
    await expect(
      checkDocxArchive(file, { ...DOCX_LIMITS, maxTotalBytes: 1024 * 1024 }),
    ).rejects.toMatchObject({
      code: 'archive_limits',
      message: 'the DOCX inflates to more than 1 MB; at most 1 MB are allowed',
    });
    // Under the real limit the same file is fine.
    await expect(checkDocxArchive(file)).resolves.toBeUndefined();
  });

  it('10,001 entries → archive_limits; 1,000 entries is still a document', async () => {
    const filler = (n: number) =>
      Array.from(
        { length: n },
        (_, i): ZipEntrySpec => ({ name: `word/media/f${i}.txt`, data: '', stored: true }),
      );
    const tooMany = await writeZip(docxEntries(documentXml(['x']), filler(10_001 - 3)));
    const error = await failure(extractor.extract(tooMany, 'docx'));
    expect(error.code).toBe('archive_limits');
    expect(error.message).toBe('the DOCX archive has 10001 entries; at most 1000 are allowed');

    const justEnough = await writeZip(docxEntries(documentXml(['Exactly at the limit']), filler(1_000 - 3)));
    expect((await extractor.extract(justEnough, 'docx')).text).toBe('Exactly at the limit');
  });

  it('duplicate entry names (in any letter case) → archive_limits', async () => {
    const twice = await writeZip([
      ...docxEntries(documentXml(['first'])),
      { name: 'word/document.xml', data: documentXml(['second']) },
    ]);
    const error = await failure(extractor.extract(twice, 'docx'));
    expect(error.code).toBe('archive_limits');
    expect(error.message).toBe('the DOCX archive contains "word/document.xml" twice');

    const cased = await writeZip([
      ...docxEntries(documentXml(['first'])),
      { name: 'Word/Document.xml', data: documentXml(['second']) },
    ]);
    expect((await failure(extractor.extract(cased, 'docx'))).code).toBe('archive_limits');
  });

  it('stored (uncompressed) entries are read like deflated ones', async () => {
    const entries = docxEntries(documentXml(['Stored, not deflated'])).map((entry) => ({
      ...entry,
      stored: true,
    }));
    expect((await extractor.extract(await writeZip(entries), 'docx')).text).toBe('Stored, not deflated');
  });

  it('an encrypted entry → encrypted', async () => {
    const entries = docxEntries(documentXml(['secret'])).map((entry) => ({ ...entry, encrypted: true }));
    expect((await failure(extractor.extract(await writeZip(entries), 'docx'))).code).toBe('encrypted');
  });
});

describe('entity expansion in document.xml', () => {
  const xxe = documentXml(
    ['before &xxe; &net; after'],
    `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY xxe SYSTEM "file:///etc/passwd"><!ENTITY net SYSTEM "http://127.0.0.1:9/x">]>`,
  );
  const lol = (n: number) => `<!ENTITY lol${n} "${`&lol${n - 1};`.repeat(10)}">`;
  const laughs = documentXml(
    ['start &lol9; end'],
    `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(lol).join('')}]>`,
  );

  it('XXE and billion laughs → corrupt, at once, through the extractor', async () => {
    for (const xml of [xxe, laughs]) {
      const started = Date.now();
      const error = await failure(extractor.extract(await writeZip(docxEntries(xml)), 'docx'));
      expect(error.code).toBe('corrupt');
      expect(error.message).toBe(
        'the DOCX part "word/document.xml" declares a DTD, which Word documents never do (entity expansion attack?)',
      );
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  });

  it("mammoth's XML parser (@xmldom/xmldom) itself neither expands nor hangs on them", async () => {
    // Straight to mammoth, past our DTD check: what would happen if the check were gone.
    for (const xml of [xxe, laughs]) {
      const buffer = makeZip(docxEntries(xml));
      const started = Date.now();
      const outcome = await mammoth.extractRawText({ buffer }).then(
        (result) => result.value,
        (error: unknown) => String(error),
      );
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(outcome).not.toContain('lollollol');
      expect(outcome).not.toContain('root:');
      expect(outcome.length).toBeLessThan(2_000);
    }
  });
});

describe('not a Word document', () => {
  it('an HTML page named .docx → corrupt', async () => {
    const file = await tmp.write('page.docx', '<!DOCTYPE html><html><body><p>Hello</p></body></html>');
    const error = await failure(extractor.extract(file, 'docx'));
    expect(error.code).toBe('corrupt');
    expect(error.message).toMatch(/^the DOCX is not a valid ZIP archive/);
  });

  it('a password-protected DOCX (an OLE container) → encrypted; a legacy .doc → corrupt', async () => {
    const secret = await tmp.write('secret.docx', oleFile(true));
    const error = await failure(extractor.extract(secret, 'docx'));
    expect(error.code).toBe('encrypted');
    expect(error.message).toBe('the DOCX is password-protected');
    const legacy = await tmp.write('legacy.docx', oleFile(false));
    const old = await failure(extractor.extract(legacy, 'docx'));
    expect(old.code).toBe('corrupt');
    expect(old.message).toBe('the file is a legacy Office document (.doc), not a DOCX');
  });

  it('a ZIP without word/document.xml → corrupt', async () => {
    const file = await writeZip([
      { name: '[Content_Types].xml', data: 'x' },
      { name: 'notes.txt', data: 'hello' },
    ]);
    const error = await failure(extractor.extract(file, 'docx'));
    expect(error.code).toBe('corrupt');
    expect(error.message).toBe(
      'the file is a ZIP archive but not a Word document (word/document.xml is missing)',
    );
  });

  itWithCorpus('a DOCX cut in half → corrupt', async () => {
    const bytes = await readFile(path.join(DOCX_DIR, 'tables.docx'));
    const file = await tmp.write('half.docx', bytes.subarray(0, bytes.length >> 1));
    expect((await failure(extractor.extract(file, 'docx'))).code).toBe('corrupt');
  });
});
