// WAL checkpoints off the event loop. SQLite runs a checkpoint inside whichever commit takes the
// WAL past 1,000 pages, on the connection that committed: in the embedded server that is the
// event loop, which then copies pages into the database file and waits for its fsync (what that
// costs is measured in bench/RESULTS.md, section 10). Here a thread with a connection of its own
// checkpoints every few hundred milliseconds (PASSIVE: it never waits for, or blocks, a writer),
// and the event loop's connection stops checkpointing. Should the thread fail, the connection
// checkpoints on its own again, as SQLite does by default.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from './database.js';

/** SQLite's own default: a commit that takes the WAL past this many pages checkpoints. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;
/**
 * 65,536 frames of 4 KB pages: a WAL file of about 256 MB at most. Each restart holds writers
 * back, so only a WAL well past an ingest burst is restarted: a lower limit restarts during
 * ordinary bursts and makes their writers wait.
 */
const DEFAULT_RESTART_FRAMES = 65_536;

// CommonJS run with `eval`: the thread needs no file of its own, so it starts the same from the
// TypeScript sources (tests) and from dist/.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 5000 });
const checkpoint = () => {
  try {
    let [pass] = db.pragma('wal_checkpoint(PASSIVE)');
    // Under a steady stream of commits a PASSIVE checkpoint never catches up with the last frame,
    // so no writer ever starts the WAL over and it grows without end. Past the limit, RESTART
    // holds writers back (they wait in their busy handler) while it copies what is left, and the
    // next commit writes at the start of the file again. More PASSIVE passes first keep what is
    // left small. (TRUNCATE, which also shrinks the file, holds writers back longer: it waits
    // for the file's truncation as well.)
    if (!pass || pass.log < workerData.restartFrames) return;
    for (let i = 0; i < 8 && pass && pass.log - pass.checkpointed > 1024; i++) {
      [pass] = db.pragma('wal_checkpoint(PASSIVE)');
    }
    db.pragma('wal_checkpoint(RESTART)');
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: String((error && error.message) || error) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
parentPort.postMessage({ type: 'ready' });
`;

export interface Checkpointer {
  /** Resolves once the thread has made a last checkpoint and closed its connection. */
  close(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** WAL frames (pages) past which a checkpoint makes the next commit start the WAL over. */
  restartFrames?: number;
  /** Told when the thread fails; the connection has already taken checkpointing back. */
  onError?: (error: Error) => void;
}

/** Starts checkpointing `file` (the database `db` has open) from a thread of its own. */
export function startCheckpointer(db: Database, file: string, opts: CheckpointerOptions = {}): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: {
      file,
      driver,
      intervalMs: opts.intervalMs ?? 250,
      restartFrames: opts.restartFrames ?? DEFAULT_RESTART_FRAMES,
    },
  });
  worker.unref();
  // Set once the thread is stopped (closed, or given up after a failure): nothing more is reported.
  let stopped = false;
  // The first failure hands checkpointing back to the connection for good and ends the thread, so
  // a checkpoint that keeps failing is reported once, not every interval.
  const fallBack = (error: Error) => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    if (stopped) return;
    stopped = true;
    opts.onError?.(error);
    void worker.terminate();
  };
  // Only once the thread has its connection does the event loop stop checkpointing.
  worker.on('message', (message: { type: string; message?: string }) => {
    if (message.type === 'ready' && !stopped && db.open) db.pragma('wal_autocheckpoint = 0');
    if (message.type === 'error') fallBack(new Error(`WAL checkpoint failed: ${message.message}`));
  });
  worker.on('error', fallBack);
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      fallBack(new Error(`the WAL checkpoint thread exited with code ${code}`));
      resolve();
    });
  });
  return {
    async close() {
      if (stopped) return exited;
      stopped = true;
      if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
