// Ending a pipeline thread or process in the middle of its work. A thread reading a DOCX would open
// a zlib stream per entry, and Node aborts the whole process when a thread stopped by terminate()
// happened to be between a stream's creation and its setup ("close before init"). So a thread is
// asked to end itself, which it does between two tasks, and terminated only when it does not.
// Files are read in child processes, which are asked too, and killed when they do not answer; they
// are not given the server's environment.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { childEnvironment, endProcess, endThread } from '../../src/pipeline/extract/hosts.js';
import { createPipelineThreads } from '../../src/pipeline/extract/index.js';
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
  it('a read timed out in the middle of a DOCX of 997 deflated entries is ended; the next read works', async () => {
    const entries = Array.from({ length: 997 }, (_, i) => ({
      name: `word/media/f${i}.txt`,
      data: `entry ${i} `.repeat(20),
    }));
    const docx = path.join(tmp.dir, 'many-entries.docx');
    await writeFile(docx, makeZip(docxEntries(documentXml(['Many entries']), entries)));
    const hasty = createPipelineThreads({ maxWorkers: 2, timeoutMs: 15, maxHeapMb: 256, pdfMaxPages: 10 });
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(
        await hasty.extract(docx, 'docx').then(
          () => 'ok',
          (error: { code?: string }) => error.code ?? String(error),
        ),
      );
    }
    await hasty.close();
    // Each read was cut short in the middle of the archive, and its process ended.
    expect(outcomes).toEqual(['timeout', 'timeout', 'timeout', 'timeout']);
    const patient = createPipelineThreads({
      maxWorkers: 1,
      timeoutMs: 30_000,
      maxHeapMb: 256,
      pdfMaxPages: 10,
    });
    try {
      expect((await patient.extract(docx, 'docx')).text).toBe('Many entries');
    } finally {
      await patient.close();
    }
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

  it('a process that never yields is killed once the grace period is over', async () => {
    const child = spawn(
      process.execPath,
      ['-e', 'process.on("message", () => {}); setTimeout(() => { for (;;) {} }, 10)'],
      {
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    await endProcess(child, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await exited).toBe('SIGKILL');
  });

  it('a process asked to end between two tasks exits on its own', async () => {
    const child = spawn(
      process.execPath,
      ['-e', 'process.on("message", (m) => { if (m.type === "exit") process.exit(0); })'],
      {
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise((resolve) => child.once('spawn', resolve));
    await endProcess(child, 5_000);
    expect(await exited).toBe(0);
    expect(child.signalCode).toBeNull();
  });
});

describe('a pipeline process’s environment', () => {
  it('keeps how Node runs, the home folder and the locale, and none of the server’s settings or secrets', () => {
    const env = childEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/docindex',
      NODE_OPTIONS: '--enable-source-maps',
      LANG: 'de_DE.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'Europe/Berlin',
      DATABASE_URL: 'postgres://user:secret@127.0.0.1/db',
      S3_SECRET_ACCESS_KEY: 'secret',
      OPENAI_API_KEY: 'sk-secret',
      ADMIN_KEY: 'secret',
      PATHEXT: 'not a PATH',
    });
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/docindex',
      NODE_OPTIONS: '--enable-source-maps',
      LANG: 'de_DE.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'Europe/Berlin',
    });
  });
});
