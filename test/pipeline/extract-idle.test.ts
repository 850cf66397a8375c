// Idle pipeline threads are stopped (idleStopMs) and give their memory back; a document that comes
// after a stop starts a new thread and is processed as before, and none is lost when a document
// and a stop meet.
import { describe, expect, it } from 'vitest';
import { chunkForIndex } from '../../src/pipeline/chunk/for-index.js';
import { createWorkerPool } from '../../src/pipeline/extract/pool.js';

const english = { given: null, configured: 'auto' } as const;
const OPTIONS = { maxWorkers: 2, timeoutMs: 30_000, maxHeapMb: 512, pdfMaxPages: 5_000 };
const headroom = { current: () => 1, stop: () => {} };
const chunking = { chunkSize: 64, chunkOverlap: 0 };

/** Resolves once `done()` holds, polling; generous, as other suites share the CPUs. */
async function until(done: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('idle pipeline threads', () => {
  it('a thread idle for idleStopMs is stopped, and the next text is chunked by a new one', async () => {
    let stops = 0;
    const pool = createWorkerPool(
      { ...OPTIONS, idleStopMs: 200 },
      { cpuHeadroom: headroom, onIdleStop: () => stops++ },
    );
    try {
      await pool.warm();
      // The thread warmed at start goes too when nothing comes.
      await until(() => stops === 1, 'the warmed thread stopped');
      const text = 'Salmon swim upstream to spawn in the rivers where they hatched.';
      expect(await pool.chunk(text, chunking)).toEqual(chunkForIndex(text, chunking, english));
      await until(() => stops === 2, 'the thread that chunked stopped');
      const again = 'Trout stay in the rivers and lakes all their lives.';
      expect(await pool.chunk(again, chunking)).toEqual(chunkForIndex(again, chunking, english));
    } finally {
      await pool.close();
    }
  });

  it('a busy thread is never stopped, however long its text takes', async () => {
    const pool = createWorkerPool({ ...OPTIONS, maxWorkers: 1, idleStopMs: 1 }, { cpuHeadroom: headroom });
    try {
      // Several texts back to back on one thread with a 1 ms idle period: each is chunked whole.
      const long = 'Words flow on and on, sentence after sentence. '.repeat(20_000);
      const texts = [long, 'second text', long, 'third text'];
      const plans = await Promise.all(texts.map((t) => pool.chunk(t, chunking)));
      expect(plans).toEqual(texts.map((t) => chunkForIndex(t, chunking, english)));
    } finally {
      await pool.close();
    }
  });

  it('no document is lost when documents arrive as threads stop', async () => {
    let stops = 0;
    const pool = createWorkerPool(
      { ...OPTIONS, idleStopMs: 30 },
      { cpuHeadroom: headroom, onIdleStop: () => stops++ },
    );
    try {
      const texts = Array.from({ length: 30 }, (_, i) => `document number ${i} about rivers`);
      const results: Promise<unknown>[] = [];
      for (const [i, text] of texts.entries()) {
        results.push(pool.chunk(text, chunking));
        // Gaps around the idle period: some documents come just before a stop, some just after.
        await new Promise((resolve) => setTimeout(resolve, 10 + ((i * 7) % 50)));
        if (i % 10 === 9) await until(() => stops > 0, 'a thread stopped');
      }
      const plans = await Promise.all(results);
      expect(plans).toEqual(texts.map((t) => chunkForIndex(t, chunking, english)));
      expect(stops).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  });
});
