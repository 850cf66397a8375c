// The worker pool: the compiled output starts its threads from worker.js, a thread that runs out
// of heap fails only its document and is replaced, abort and close end work at once, idle threads
// never keep a process alive, and chunking in a thread gives what chunking inline gives.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks } from '../../src/domain/chunk-batches.js';
import { chunkForIndex } from '../../src/pipeline/chunk/for-index.js';
import { createPipelineThreads, ExtractionError, finishRunFor } from '../../src/pipeline/extract/index.js';
import { createWorkerPool } from '../../src/pipeline/extract/pool.js';
import { LEAN_PROCESS_FLAGS } from '../../src/pipeline/extract/pool-jobs.js';
import { HAVE_CORPUS, itWithCorpus } from '../helpers/shared.js';
import { DOCX_DIR, FIXTURES, makeTempDir, PDF_DIR, ROOT, type TempDir } from './extract-support.js';

/** The threads' analysis: each text's language told from it (SEARCH_LANGUAGE=auto). */
const english = { given: null, configured: 'auto' } as const;

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
  itWithCorpus(
    'starts threads from worker.js and extracts; idle threads let the process exit without close()',
    async () => {
      // The same per-file emit tsc does for the modules the threads load, into the dist/ layout,
      // without building (and type-checking) the rest of the project.
      const out = path.join(tmp.dir, 'dist/src/pipeline/extract');
      const modules = [
        'src/pipeline/extract',
        ...(await readdir(path.join(ROOT, 'src/pipeline/formats'), { withFileTypes: true }))
          .filter((entry) => entry.isDirectory())
          .map((entry) => `src/pipeline/formats/${entry.name}`),
        'src/pipeline/formats',
        'src/domain/formats.ts',
        'src/pipeline/chunk',
        'src/domain/search-words.ts',
        'src/domain/ascii-words.ts',
        'src/domain/languages.ts',
        'src/domain/korean.ts',
        'src/domain/language-detection.ts',
        'src/domain/errors.ts',
        'src/domain/chunk-batches.ts',
        'src/pipeline/errors.ts',
        'src/pipeline/ocr',
      ];
      for (const module of modules) {
        const names = module.endsWith('.ts')
          ? [path.basename(module)]
          : (await readdir(path.join(ROOT, module))).filter((n) => n.endsWith('.ts') && !n.endsWith('.d.ts'));
        const dir = module.endsWith('.ts') ? path.dirname(module) : module;
        await mkdir(path.join(tmp.dir, 'dist', dir), { recursive: true });
        for (const name of names) {
          const { outputText } = ts.transpileModule(await readFile(path.join(ROOT, dir, name), 'utf8'), {
            compilerOptions: {
              module: ts.ModuleKind.ES2022,
              target: ts.ScriptTarget.ES2022,
              esModuleInterop: true,
            },
            fileName: name,
          });
          await writeFile(path.join(tmp.dir, 'dist', dir, name.replace(/\.ts$/, '.js')), outputText);
        }
      }
      await writeFile(path.join(tmp.dir, 'package.json'), '{"type":"module"}');
      await symlink(path.join(ROOT, 'node_modules'), path.join(tmp.dir, 'node_modules'), 'dir');

      const script = `
      import { createPipelineThreads } from './dist/src/pipeline/extract/index.js';
      import { workerEntry } from './dist/src/pipeline/extract/worker-entry.js';
      const extractor = createPipelineThreads({ maxWorkers: 2, timeoutMs: 30000, maxHeapMb: 256, pdfMaxPages: 5000 });
      const pdf = await extractor.extract(${JSON.stringify(path.join(FIXTURES, 'hyphenation.pdf'))}, 'pdf');
      const docx = await extractor.extract(${JSON.stringify(path.join(DOCX_DIR, 'tables.docx'))}, 'docx');
      const plan = await extractor.chunk('The café was running out of milk. '.repeat(100), { chunkSize: 64, chunkOverlap: 8 });
      console.log(JSON.stringify({ entry: workerEntry().href, pages: pdf.pages.length, pdf: pdf.text.slice(0, 18), docx: docx.text.slice(0, 5), chunks: plan.chunks.length, words: plan.chunks[0].words.slice(0, 12) }));
      // No close(): the idle threads must not keep this process alive.
    `;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
        cwd: tmp.dir,
        timeout: 30_000,
      });
      const report = JSON.parse(stdout.trim()) as { entry: string; chunks: number };
      expect(report.entry).toBe(`file://${out}/worker.js`);
      expect(report).toMatchObject({
        pages: 3,
        pdf: 'Extraction Fixture',
        docx: 'Above',
        // Told to be English from its function words: folded, then stemmed by Porter.
        words: 'the cafe wa ',
      });
      expect(report.chunks).toBeGreaterThan(1);
    },
  );
});

describe('warm()', () => {
  it('starts a thread and resolves once it has loaded and run the chunker; later calls resolve at once', async () => {
    const extractor = createPipelineThreads(OPTIONS);
    try {
      await extractor.warm();
      await extractor.warm();
    } finally {
      await extractor.close();
    }
  });

  it('resolves when the pool closes before a thread is warm', async () => {
    const extractor = createPipelineThreads(OPTIONS);
    const warming = extractor.warm();
    await extractor.close();
    await warming;
  });
});

describe('parsers load with the first file', () => {
  it('the time cap stops while a thread loads its parsers: a fresh thread reads a small file under a short cap', async () => {
    // Loading every format's parser takes far longer than 250 ms; reading this file, a few ms.
    const extractor = createPipelineThreads({ ...OPTIONS, timeoutMs: 250 });
    try {
      const small = await tmp.write('first.txt', 'the first file this thread reads');
      expect((await extractor.extract(small, 'txt')).text).toBe('the first file this thread reads');
      // The parsers stay loaded: the next file, of another format, is read under the same cap.
      const page = await tmp.write('second.html', '<html><body><p>and then a page</p></body></html>');
      expect((await extractor.extract(page, 'html')).text).toBe('and then a page');
    } finally {
      await extractor.close();
    }
  });
});

describe('a thread that runs out of heap', () => {
  it('fails only its document (too_large); the next document gets a fresh thread', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxHeapMb: 64 });
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

describe('a file whose one allocation leaps past the heap cap', () => {
  it('fails too_large, and this process lives on', async () => {
    // Line endings made \n copy a 51 MB text in one step: far more than the 16 MB a thread is
    // given past its cap, which aborts the whole process when the reader is a thread.
    const crlf = await tmp.write('crlf.txt', 'a line of words\r\n'.repeat(3 * 1024 * 1024));
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, maxHeapMb: 64 });
    try {
      const error = await extractor.extract(crlf, 'txt').then(
        () => null,
        (reason: unknown) => reason as ExtractionError,
      );
      expect(error).toBeInstanceOf(ExtractionError);
      expect(error?.code).toBe('too_large');
      expect(error?.message).toBe('extracting the document needs more than 64 MB of memory');
      const small = await tmp.write('after.txt', 'still here');
      expect((await extractor.extract(small, 'txt')).text).toBe('still here');
    } finally {
      await extractor.close();
    }
  });
});

describe('abort and close', () => {
  itWithCorpus(
    'an abort signal ends the extraction at once with its reason; the pool carries on',
    async () => {
      const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
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
    },
  );

  it('close() rejects running and queued documents, and later calls', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
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
  itWithCorpus('more documents than threads: each gets its own text', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 2 });
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
    expect(() => createPipelineThreads({ ...OPTIONS, maxWorkers: 0 })).toThrow(RangeError);
  });
});

describe('chunking in threads', () => {
  const markdown = Array.from(
    { length: 60 },
    (_, i) =>
      `## Section ${i}\n\nThe Æsir café served crème brûlée number ${i}. ${'Words flow on and on. '.repeat(12)}`,
  ).join('\n\n');

  it('gives the chunks and search words chunking inline gives, pages included', async () => {
    const extractor = createPipelineThreads(OPTIONS);
    try {
      const half = Math.floor(markdown.length / 2);
      const options = {
        chunkSize: 128,
        chunkOverlap: 16,
        markdown: true,
        pages: [
          { page: 1, charStart: 0, charEnd: half },
          { page: 2, charStart: half, charEnd: markdown.length },
        ],
      };
      const [threaded, again] = await Promise.all([
        extractor.chunk(markdown, options),
        extractor.chunk('', options),
      ]);
      expect(threaded).toEqual(chunkForIndex(markdown, options, english));
      expect(threaded.chunks.length).toBeGreaterThan(10);
      expect(threaded.chunks[0]!.words).toMatch(/^section 0 the æsir cafe serv creme brule number 0 word/);
      expect(threaded.chunks.at(-1)!.pageEnd).toBe(2);
      expect(threaded.contentSha256).toBe(createHash('sha256').update(markdown).digest('hex'));
      expect(again).toEqual({
        chunks: [],
        tokenCount: 0,
        language: 'en',
        contentSha256: createHash('sha256').digest('hex'),
      });
    } finally {
      await extractor.close();
    }
  });

  /** indexFile read to its end, as one plan. */
  async function indexed(
    extractor: ReturnType<typeof createPipelineThreads>,
    ...args: Parameters<ReturnType<typeof createPipelineThreads>['indexFile']>
  ) {
    const { chunks, totals } = await collectChunks({
      ...extractor.indexFile(...args),
      contentType: null,
      bytes: null,
    });
    return { chunks, ...totals };
  }

  it('indexFile() gives what extract() then chunk() give, for a text of many messages and for a PDF', async () => {
    const extractor = createPipelineThreads(OPTIONS);
    try {
      // Over a megabyte of text: its chunks come back in several messages.
      const text = markdown.repeat(Math.ceil(1_200_000 / markdown.length));
      const file = path.join(tmp.dir, 'long.md');
      await writeFile(file, text);
      const options = { chunkSize: 256, chunkOverlap: 32, markdown: true };
      const plan = await indexed(extractor, file, 'md', options);
      expect(plan).toEqual(chunkForIndex(text, options, english));
      expect(plan.chunks.length).toBeGreaterThan(500);

      const pdf = path.join(FIXTURES, 'hyphenation.pdf');
      const extracted = await extractor.extract(pdf, 'pdf');
      const pdfPlan = await indexed(extractor, pdf, 'pdf', { chunkSize: 64, chunkOverlap: 8 });
      // A PDF's totals also say how many pages OCR read: none, every page of this one has text.
      expect(pdfPlan).toEqual({
        ...chunkForIndex(extracted.text, { chunkSize: 64, chunkOverlap: 8, pages: extracted.pages }, english),
        ocrPages: 0,
      });
      expect(pdfPlan.chunks[0]!.pageStart).toBe(1);

      await expect(
        indexed(extractor, path.join(tmp.dir, 'absent.txt'), 'txt', options),
      ).rejects.toMatchObject({
        name: 'ExtractionError',
        code: 'corrupt',
      });
    } finally {
      await extractor.close();
    }
  });

  it('a large PDF, read and chunked page by page in one thread, gives the chunks of its pages joined', async () => {
    // pagedStreamFromBytes 0: every PDF is large. The same chunks, spans, page ranges and totals as
    // the split-and-join path of a default pool.
    const joined = createPipelineThreads(OPTIONS);
    const streamed = createPipelineThreads({ ...OPTIONS, pagedStreamFromBytes: 0 });
    try {
      const options = { chunkSize: 64, chunkOverlap: 8 };
      const files = [path.join(FIXTURES, 'hyphenation.pdf'), ...(HAVE_CORPUS ? [GEOTOPO] : [])];
      for (const file of files) {
        const reference = await indexed(joined, file, 'pdf', options);
        const paged = await indexed(streamed, file, 'pdf', options);
        expect(paged).toEqual(reference);
        expect(new Set(paged.chunks.map((c) => c.pageEnd)).size).toBeGreaterThan(1);
      }
      await expect(
        indexed(streamed, path.join(FIXTURES, 'owner-protected.pdf'), 'pdf', options),
      ).resolves.toMatchObject({ ocrPages: 0 });
      await expect(indexed(streamed, path.join(tmp.dir, 'absent.pdf'), 'pdf', options)).rejects.toMatchObject(
        {
          name: 'ExtractionError',
          code: 'corrupt',
        },
      );
      const tooMany = createPipelineThreads({ ...OPTIONS, pagedStreamFromBytes: 0, pdfMaxPages: 2 });
      try {
        await expect(
          indexed(tooMany, path.join(FIXTURES, 'hyphenation.pdf'), 'pdf', options),
        ).rejects.toMatchObject({ code: 'too_large' });
      } finally {
        await tooMany.close();
      }
    } finally {
      await joined.close();
      await streamed.close();
    }
  });

  it('a large PDF is read in a process of its own whose heap grows slowly; other files are not', async () => {
    // The Node flags of this process's pipeline processes, as `ps` shows them.
    const childFlags = async (): Promise<string[][]> => {
      const pids: string[] = [];
      for (const task of await readdir('/proc/self/task')) {
        const children = await readFile(`/proc/self/task/${task}/children`, 'utf8').catch(() => '');
        pids.push(...children.split(' ').filter(Boolean));
      }
      const commands = await Promise.all(
        pids.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
      );
      return commands
        .map((command) => command.split('\0'))
        .filter((args) => args.includes(`--max-old-space-size=${OPTIONS.maxHeapMb}`))
        .map((args) => args.filter((arg) => arg.startsWith('--')));
    };
    const lean = LEAN_PROCESS_FLAGS;
    const pool = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, pagedStreamFromBytes: 0 });
    try {
      const options = { chunkSize: 64, chunkOverlap: 8 };
      const text = path.join(tmp.dir, 'plain.txt');
      await writeFile(text, 'A plain text file of a few words.\n'.repeat(50));
      await indexed(pool, text, 'txt', options);
      const afterFirstText = await childFlags();
      expect(afterFirstText).toHaveLength(1);
      for (const flag of lean) expect(afterFirstText[0]).not.toContain(flag);

      await indexed(pool, path.join(FIXTURES, 'hyphenation.pdf'), 'pdf', options);
      const afterPdf = await childFlags();
      expect(afterPdf).toHaveLength(1);
      expect(afterPdf[0]).toEqual(expect.arrayContaining([...lean]));

      // The next file of another kind does not run in the lean process: it takes its place.
      await indexed(pool, text, 'txt', options);
      const afterText = await childFlags();
      expect(afterText).toHaveLength(1);
      for (const flag of lean) expect(afterText[0]).not.toContain(flag);
    } finally {
      await pool.close();
    }
  });

  it('streams a long text’s chunks in several batches; a reader that lets go ends the job', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
    try {
      const text = markdown.repeat(Math.ceil(1_500_000 / markdown.length));
      const options = { chunkSize: 256, chunkOverlap: 32 };
      const stream = extractor.indexText(text, options);
      expect(() => stream.totals()).toThrow(/once every chunk/);
      const batches: number[] = [];
      const chunks = [];
      for await (const batch of stream.chunks) {
        batches.push(batch.length);
        chunks.push(...batch);
      }
      const inline = chunkForIndex(text, options, english);
      expect(batches.length).toBeGreaterThan(2);
      expect(chunks).toEqual(inline.chunks);
      expect(stream.totals()).toEqual({
        tokenCount: inline.tokenCount,
        contentSha256: inline.contentSha256,
        language: inline.language,
      });

      // Let go after the first batch: the job ends, and the only thread is free for the next text.
      const file = path.join(tmp.dir, 'let-go.txt');
      await writeFile(file, text);
      const iterator = extractor.indexFile(file, 'txt', options).chunks[Symbol.asyncIterator]();
      expect((await iterator.next()).done).toBe(false);
      await iterator.return?.();
      expect((await extractor.chunk('after the reader let go', options)).chunks).toHaveLength(1);

      const failed = extractor.indexFile(path.join(tmp.dir, 'absent.txt'), 'txt', options);
      const error = await (async () => {
        for await (const _ of failed.chunks) throw new Error('no chunks expected');
      })().catch((e) => e);
      expect(error).toBeInstanceOf(ExtractionError);
    } finally {
      await extractor.close();
    }
  });

  it('threads compute the words of the configured SEARCH_LANGUAGE', async () => {
    const text = 'Running cells were counted';
    for (const [language, words] of [
      ['english', 'run cell were count'],
      ['none', 'running cells were counted'],
    ] as const) {
      const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1, searchLanguage: language });
      try {
        const plan = await extractor.chunk(text, { chunkSize: 64, chunkOverlap: 0 });
        expect(plan.chunks.map((c) => c.words)).toEqual([words]);
      } finally {
        await extractor.close();
      }
    }
  });

  itWithCorpus('a chunk job waits its turn behind extraction and can be aborted like one', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
    try {
      const pdf = extractor.extract(GEOTOPO, 'pdf');
      const reason = new Error('document deleted');
      const controller = new AbortController();
      const chunked = extractor.chunk(markdown, { chunkSize: 64, chunkOverlap: 0 }, controller.signal);
      controller.abort(reason);
      await expect(chunked).rejects.toBe(reason);
      expect((await pdf).pages).toHaveLength(117);
      const plan = await extractor.chunk('one two three', { chunkSize: 64, chunkOverlap: 0 });
      expect(plan.chunks.map((c) => c.words)).toEqual(['on two three']);
    } finally {
      await extractor.close();
    }
  });

  describe('texts queued inside a busy thread', () => {
    const headroom = { current: () => 1, stop: () => {} };
    type OneThread = { pool: ReturnType<typeof createWorkerPool>; queued: () => number };
    /**
     * Runs `test` with a pool of one loaded thread that counts the texts sent to it while busy
     * (`finishRuns`: the pool's runs of ends, each end at once when absent).
     */
    async function withOneThread(
      test: (t: OneThread) => Promise<void>,
      finishRuns?: { max: number; holdMs?: number },
    ): Promise<void> {
      let queuedInThread = 0;
      const pool = createWorkerPool(
        { ...OPTIONS, maxWorkers: 1, ...(finishRuns ? { finishRuns } : {}) },
        { cpuHeadroom: headroom, onQueuedInThread: () => queuedInThread++ },
      );
      try {
        await pool.chunk('warm up', { chunkSize: 64, chunkOverlap: 0 });
        await test({ pool, queued: () => queuedInThread });
      } finally {
        await pool.close();
      }
    }
    // Just under the 1 MB a text may wait behind; a few tens of milliseconds of chunking.
    const long = 'Words flow on and on, sentence after sentence. '.repeat(20_000);
    const options = { chunkSize: 256, chunkOverlap: 32 };

    it('the next text waits in the thread, and each text gets its own chunks', () =>
      withOneThread(async ({ pool, queued }) => {
        const texts = [long, 'second text', 'third text', markdown];
        const plans = await Promise.all(texts.map((t) => pool.chunk(t, options)));
        expect(queued()).toBeGreaterThanOrEqual(1);
        expect(plans).toEqual(texts.map((t) => chunkForIndex(t, options, english)));
      }));

    it('takes turns between groups: another org’s text goes before the rest of one org’s backlog', () =>
      withOneThread(async ({ pool }) => {
        const longer = long.repeat(2); // past the in-thread limit: each waits in the pool
        const finished: string[] = [];
        const run = (name: string, text: string, group: string) =>
          collectChunks({
            ...pool.indexText(text, options, undefined, group),
            contentType: null,
            bytes: null,
          }).then(() => finished.push(name));
        await Promise.all([
          run('a1', longer, 'org_a'),
          run('a2', longer, 'org_a'),
          run('a3', longer, 'org_a'),
          run('b', 'one line of org b', 'org_b'),
        ]);
        // The thread is busy with a1 when b arrives; b goes next, not after a2 and a3.
        expect(finished).toEqual(['a1', 'b', 'a2', 'a3']);
      }));

    it('two texts wait in a busy thread at most; the next stays in the pool', () =>
      withOneThread(async ({ pool, queued }) => {
        const texts = [long, 'second text', 'third text', 'fourth text'];
        const chunking = texts.map((t) => pool.chunk(t, options));
        // Handed out at once: the long text to the thread, two behind it, the last kept back.
        expect(queued()).toBe(2);
        const plans = await Promise.all(chunking);
        expect(plans.map((p) => p.chunks.map((c) => c.words))).toEqual([
          chunkForIndex(long, options, english).chunks.map((c) => c.words),
          ['second text'],
          ['third text'],
          ['fourth text'],
        ]);
      }));

    /**
     * Chunks two short texts back to back and tells, once the first has been handed on, whether
     * the second had been too by then (in the same delivery) or not yet.
     */
    async function secondDoneWithFirst(pool: OneThread['pool'], second: string): Promise<boolean> {
      let secondDone = false;
      const first = pool.chunk('the first of two texts', options);
      const other = pool.chunk(second, options).then(() => {
        secondDone = true;
      });
      // Queued after the microtasks that handing on both would have queued, and before the
      // thread's next message can be read.
      const seen = await first.then(
        () => new Promise<boolean>((resolve) => queueMicrotask(() => resolve(secondDone))),
      );
      await other;
      return seen;
    }

    it('hands on the ends of short texts chunked back to back together, in runs of up to `max`', async () => {
      await withOneThread(
        async ({ pool }) => {
          expect(await secondDoneWithFirst(pool, 'the second text')).toBe(true);
        },
        { max: 4, holdMs: 60_000 },
      );
      // Without runs, each text's end is handed on as the thread sends it.
      await withOneThread(async ({ pool }) => {
        expect(await secondDoneWithFirst(pool, 'the second text')).toBe(false);
      });
    });

    it('an end is held no longer than `holdMs`: it does not wait for a slow text behind it', () =>
      withOneThread(
        async ({ pool }) => {
          // Short enough to be waited for, long enough to take milliseconds to chunk.
          const slower = 'Words flow on and on, sentence after sentence. '.repeat(1_300);
          expect(await secondDoneWithFirst(pool, slower)).toBe(false);
        },
        { max: 4, holdMs: 1 },
      ));

    it('runs of ends only as long as one org keeps each thread busy meanwhile', () => {
      // Per thread: the text it chunks and the two queued in it come first; the rest may be held.
      expect(finishRunFor(3, 1)).toBe(1);
      expect(finishRunFor(5, 1)).toBe(2);
      expect(finishRunFor(7, 1)).toBe(4);
      expect(finishRunFor(63, 1)).toBe(4);
      expect(finishRunFor(7, 2)).toBe(1);
      expect(finishRunFor(1, 3)).toBe(1);
    });

    it('never waits behind a long text: it stays in the pool for the first thread to come free', () =>
      withOneThread(async ({ pool, queued }) => {
        const longer = long.repeat(2); // ~1.9 MB: past the limit
        const plans = await Promise.all([pool.chunk(longer, options), pool.chunk('second text', options)]);
        expect(queued()).toBe(0);
        expect(plans[1]!.chunks.map((c) => c.words)).toEqual(['second text']);
      }));

    it('a text cancelled while it waits in the thread rejects at once; the thread carries on', () =>
      withOneThread(async ({ pool, queued }) => {
        const reason = new Error('document deleted');
        const controller = new AbortController();
        const first = pool.chunk(long, options);
        const cancelled = pool.chunk(markdown, options, controller.signal);
        expect(queued()).toBe(1);
        controller.abort(reason);
        await expect(cancelled).rejects.toBe(reason);
        expect(await first).toEqual(chunkForIndex(long, options, english));
        expect((await pool.chunk('one two three', options)).chunks.map((c) => c.words)).toEqual([
          'on two three',
        ]);
      }));

    it('when the thread is ended under a text, the text waiting in it goes to a fresh thread', () =>
      withOneThread(async ({ pool, queued }) => {
        const reason = new Error('lease lost');
        const controller = new AbortController();
        // Aborting the text being chunked ends its thread (it may be stuck in it).
        const running = pool.chunk(long, options, controller.signal);
        const waiting = pool.chunk('small and fine', options);
        expect(queued()).toBe(1);
        controller.abort(reason);
        await expect(running).rejects.toBe(reason);
        expect((await waiting).chunks.map((c) => c.words)).toEqual(['small and fine']);
      }));
  });

  it('a bug in chunking (invalid options) rejects as a plain error, not as a document failure', async () => {
    const extractor = createPipelineThreads({ ...OPTIONS, maxWorkers: 1 });
    try {
      const error = await extractor.chunk('text', { chunkSize: 8, chunkOverlap: 8 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(ExtractionError);
      expect((error as Error).message).toMatch(/chunkOverlap/);
    } finally {
      await extractor.close();
    }
  });
});
