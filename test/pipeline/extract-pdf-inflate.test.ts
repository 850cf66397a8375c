// A PDF whose compressed streams inflate far beyond its size fails `too_large` before pdf.js
// decodes them (pdf.js would hold every decoded byte, outside the thread's heap cap); ordinary
// compressed PDFs are not affected.
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineThreads,
  ExtractionError,
  type PipelineThreads,
} from '../../src/pipeline/extract/index.js';
import {
  checkDecodedSize,
  decodedBudget,
  flateStreams,
} from '../../src/pipeline/formats/pdf/decoded-budget.js';
import { deflatedZeros, makeTempDir, type TempDir } from './extract-support.js';

/** zlib framing around a raw deflate stream (the adler32 is left zero: pdf.js does not check it). */
function zlibOf(raw: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x78, 0x9c]), raw, Buffer.alloc(4)]);
}

/** A one-page PDF whose content stream is `stream` (Flate-compressed), with a correct xref. */
function onePagePdf(stream: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  const add = (text: string | Buffer) =>
    parts.push(typeof text === 'string' ? Buffer.from(text, 'latin1') : text);
  const length = () => parts.reduce((n, p) => n + p.length, 0);
  const object = (n: number, body: string) => {
    offsets[n] = length();
    add(`${n} 0 obj\n${body}\nendobj\n`);
  };
  object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  object(
    3,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
  );
  offsets[4] = length();
  add(`4 0 obj\n<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`);
  add(stream);
  add('\nendstream\nendobj\n');
  object(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const xref = length();
  add(`xref\n0 6\n0000000000 65535 f \n`);
  for (let n = 1; n <= 5; n++) add(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  add(`trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return Buffer.concat(parts);
}

describe('Flate streams counted before pdf.js decodes them', () => {
  let dir: TempDir;
  let extractor: PipelineThreads;
  beforeAll(async () => {
    dir = await makeTempDir();
    extractor = createPipelineThreads({
      maxWorkers: 1,
      timeoutMs: 120_000,
      maxHeapMb: 512,
      pdfMaxPages: 5_000,
    });
  });
  afterAll(async () => {
    await extractor.close();
    await dir.remove();
  });

  it('finds each FlateDecode stream and its data, not `endstream` nor other filters', () => {
    const text = onePagePdf(deflateSync('BT /F1 12 Tf 72 700 Td (hello) Tj ET'));
    const streams = [...flateStreams(text)];
    expect(streams).toHaveLength(1);
    const [start, end] = streams[0]!;
    expect(text.subarray(start, start + 2)).toEqual(Buffer.from([0x78, 0x9c]));
    expect(text.toString('latin1', end, end + 9)).toBe('endstream');
    const ascii = Buffer.from(
      '1 0 obj\n<< /Filter [/ASCII85Decode /FlateDecode] >>\nstream\nabc\nendstream\nendobj\n',
    );
    expect([...flateStreams(ascii)]).toEqual([]);
  });

  it('a page whose content inflates past the budget fails too_large, and never reaches pdf.js', async () => {
    // 400 MiB of zeros in ~400 KB: past the 256 MiB any PDF may inflate to.
    const bomb = onePagePdf(zlibOf(deflatedZeros(400)));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(decodedBudget(bomb.length)).toBe(256 * 1024 * 1024);
    const file = await dir.write('bomb.pdf', bomb);
    const error = await extractor.extract(file, 'pdf').then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ExtractionError);
    expect((error as ExtractionError).code).toBe('too_large');
    expect((error as ExtractionError).message).toContain('inflate to more than 256 MiB');
  });

  it('a compressed page within the budget extracts its text', async () => {
    const file = await dir.write(
      'ok.pdf',
      onePagePdf(deflateSync('BT /F1 12 Tf 72 700 Td (hello compressed world) Tj ET')),
    );
    const result = await extractor.extract(file, 'pdf');
    expect(result.text).toContain('hello compressed world');
  });

  it('counts every stream of a file together, against the budget it is given', async () => {
    const page = onePagePdf(zlibOf(deflatedZeros(3)));
    await expect(checkDecodedSize(page, 4 * 1024 * 1024)).resolves.toBeUndefined();
    const twice = Buffer.concat([page, page]);
    await expect(checkDecodedSize(twice, 4 * 1024 * 1024)).rejects.toMatchObject({ code: 'too_large' });
  });
});
