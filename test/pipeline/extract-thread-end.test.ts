// Ending a pipeline thread in the middle of its work. A thread reading a DOCX opens a zlib stream
// per entry, and Node aborts the whole process when a thread stopped by terminate() happened to be
// between a stream's creation and its setup ("close before init"). So the pool asks a thread to
// end itself, which it does between two tasks, and terminates only a thread that does not.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPipelineThreads } from '../../src/pipeline/extract/index.js';
import { endThread } from '../../src/pipeline/extract/pool.js';
import { documentXml, docxEntries, makeTempDir, makeZip, type TempDir } from './extract-support.js';

let tmp: TempDir;
beforeAll(async () => {
  tmp = await makeTempDir();
});
afterAll(async () => {
  await tmp.remove();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('ending a pipeline thread', () => {
  it('a thread timed out in the middle of a DOCX of 997 deflated entries ends itself: none is terminated', async () => {
    const entries = Array.from({ length: 997 }, (_, i) => ({
      name: `word/media/f${i}.txt`,
      data: `entry ${i} `.repeat(20),
    }));
    const docx = path.join(tmp.dir, 'many-entries.docx');
    await writeFile(docx, makeZip(docxEntries(documentXml(['Many entries']), entries)));
    const terminate = vi.spyOn(Worker.prototype, 'terminate');
    const threads = createPipelineThreads({ maxWorkers: 2, timeoutMs: 15, maxHeapMb: 256, pdfMaxPages: 10 });
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(
        await threads.extract(docx, 'docx').then(
          () => 'ok',
          (error: { code?: string }) => error.code ?? String(error),
        ),
      );
    }
    await threads.close();
    // Each read was cut short in the middle of the archive, and its thread ended.
    expect(outcomes).toEqual(['timeout', 'timeout', 'timeout', 'timeout']);
    expect(terminate).not.toHaveBeenCalled();
  }, 60_000);

  it('a thread that never yields is terminated once the grace period is over', async () => {
    const worker = new Worker('for (;;) {}', { eval: true });
    await new Promise((resolve) => worker.once('online', resolve));
    const terminate = vi.spyOn(worker, 'terminate');
    const exited = new Promise<number>((resolve) => worker.once('exit', resolve));
    const started = Date.now();
    await endThread(worker, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(terminate).toHaveBeenCalledTimes(1);
    expect(await exited).toBe(1);
  });

  it('a thread that has already ended is not waited for', async () => {
    const worker = new Worker('', { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));
    const started = Date.now();
    await endThread(worker, 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
