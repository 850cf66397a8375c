// The worker pool: the compiled output starts its threads from worker.js, a thread that runs out
// of heap fails only its document and is replaced, abort and close end work at once, and idle
// threads never keep a process alive.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExtractor, ExtractionError } from '../../src/pipeline/extract/index.js';
import { DOCX_DIR, FIXTURES, makeTempDir, PDF_DIR, ROOT, type TempDir } from './extract-support.js';

const OPTIONS = { maxWorkers: 2, timeoutMs: 30_000, maxHeapMb: 512, pdfMaxPages: 5_000 };
const GEOTOPO = path.join(PDF_DIR, 'GeoTopo-komprimiert.pdf');

let tmp: TempDir;
beforeAll(async () => {
  tmp = await makeTempDir();
});
afterAll(async () => {
  await tmp.remove();
});

describe('built with tsc (dist/src/pipeline/extract/*.js)', () => {
  it('starts threads from worker.js and extracts; idle threads let the process exit without close()', async () => {
    // The same per-file emit tsc does for these modules, into the dist/ layout, without building
    // (and type-checking) the rest of the project.
    const source = path.join(ROOT, 'src/pipeline/extract');
    const out = path.join(tmp.dir, 'dist/src/pipeline/extract');
    await mkdir(out, { recursive: true });
    for (const name of await readdir(source)) {
      if (!name.endsWith('.ts') || name.endsWith('.d.ts')) continue;
      const { outputText } = ts.transpileModule(await readFile(path.join(source, name), 'utf8'), {
        compilerOptions: {
          module: ts.ModuleKind.ES2022,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
        },
        fileName: name,
      });
      await writeFile(path.join(out, name.replace(/\.ts$/, '.js')), outputText);
    }
    await writeFile(path.join(tmp.dir, 'package.json'), '{"type":"module"}');
    await symlink(path.join(ROOT, 'node_modules'), path.join(tmp.dir, 'node_modules'), 'dir');

    const script = `
      import { createExtractor } from './dist/src/pipeline/extract/index.js';
      import { workerEntry } from './dist/src/pipeline/extract/worker-entry.js';
      const extractor = createExtractor({ maxWorkers: 2, timeoutMs: 30000, maxHeapMb: 256, pdfMaxPages: 5000 });
      const pdf = await extractor.extract(${JSON.stringify(path.join(FIXTURES, 'hyphenation.pdf'))}, 'pdf');
      const docx = await extractor.extract(${JSON.stringify(path.join(DOCX_DIR, 'tables.docx'))}, 'docx');
      console.log(JSON.stringify({ entry: workerEntry().href, pages: pdf.pages.length, pdf: pdf.text.slice(0, 18), docx: docx.text.slice(0, 5) }));
      // No close(): the idle threads must not keep this process alive.
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: tmp.dir,
      timeout: 30_000,
    });
    const report = JSON.parse(stdout.trim()) as { entry: string; pages: number; pdf: string; docx: string };
    expect(report.entry).toBe(`file://${out}/worker.js`);
    expect(report).toMatchObject({ pages: 3, pdf: 'Extraction Fixture', docx: 'Above' });
  });
});

describe('a thread that runs out of heap', () => {
  it('fails only its document (too_large); the next document gets a fresh thread', async () => {
    const extractor = createExtractor({ ...OPTIONS, maxHeapMb: 64 });
    try {
      // Half a million DOM nodes do not fit in 64 MB; the page itself is 3 MB.
      const huge = await tmp.write('huge.html', `<html><body>${'<p>a</p>'.repeat(400_000)}</body></html>`);
      const small = await tmp.write('small.txt', 'small and fine');
      const [big, fine] = await Promise.allSettled([
        extractor.extract(huge, 'html'),
        extractor.extract(small, 'txt'),
      ]);
      expect(big.status).toBe('rejected');
      const error = (big as PromiseRejectedResult).reason as ExtractionError;
      expect(error).toBeInstanceOf(ExtractionError);
      expect(error.code).toBe('too_large');
      expect(error.message).toBe('extracting the document needs more than 64 MB of memory');
      expect(fine).toMatchObject({ status: 'fulfilled', value: { text: 'small and fine' } });
      expect((await extractor.extract(path.join(FIXTURES, 'hyphenation.pdf'), 'pdf')).pages).toHaveLength(3);
    } finally {
      await extractor.close();
    }
  });
});

describe('abort and close', () => {
  it('an abort signal ends the extraction at once with its reason; the pool carries on', async () => {
    const extractor = createExtractor({ ...OPTIONS, maxWorkers: 1 });
    try {
      const controller = new AbortController();
      const reason = new Error('document deleted');
      const pending = extractor.extract(GEOTOPO, 'pdf', controller.signal);
      setTimeout(() => controller.abort(reason), 100);
      const started = Date.now();
      await expect(pending).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(1_000);

      const already = AbortSignal.abort(reason);
      await expect(extractor.extract(GEOTOPO, 'pdf', already)).rejects.toBe(reason);

      expect((await extractor.extract(path.join(DOCX_DIR, 'single-paragraph.docx'), 'docx')).text).toBe(
        'Walking on imported air',
      );
    } finally {
      await extractor.close();
    }
  });

  it('close() rejects running and queued documents, and later calls', async () => {
    const extractor = createExtractor({ ...OPTIONS, maxWorkers: 1 });
    const outcome = (promise: Promise<unknown>) =>
      promise.then(
        () => 'resolved',
        (error: Error) => error.message,
      );
    const running = outcome(extractor.extract(GEOTOPO, 'pdf'));
    const queued = outcome(extractor.extract(path.join(DOCX_DIR, 'tables.docx'), 'docx'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await extractor.close();
    expect(await running).toBe('the extractor is closed');
    expect(await queued).toBe('the extractor is closed');
    await expect(extractor.extract(GEOTOPO, 'pdf')).rejects.toThrow('the extractor is closed');
  });
});

describe('queueing', () => {
  it('more documents than threads: each gets its own text', async () => {
    const extractor = createExtractor({ ...OPTIONS, maxWorkers: 2 });
    try {
      const inputs = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          tmp.write(`q${i}.${i % 2 ? 'md' : 'txt'}`, `document number ${i}`),
        ),
      );
      const outputs = await Promise.all([
        ...inputs.map((file, i) => extractor.extract(file, i % 2 ? 'md' : 'txt')),
        extractor.extract(path.join(FIXTURES, 'hyphenation.pdf'), 'pdf'),
        extractor.extract(path.join(DOCX_DIR, 'simple-list.docx'), 'docx'),
      ]);
      expect(outputs.slice(0, 8).map((o) => o.text)).toEqual(inputs.map((_, i) => `document number ${i}`));
      expect(outputs[8]!.pages).toHaveLength(3);
      expect(outputs[9]!.text).toBe('Apple\n\nBanana');
    } finally {
      await extractor.close();
    }
  });

  it('refuses a pool without threads', () => {
    expect(() => createExtractor({ ...OPTIONS, maxWorkers: 0 })).toThrow(RangeError);
  });
});
