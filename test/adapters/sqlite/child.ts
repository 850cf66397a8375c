// A second OS process for the multi-process SQLite tests: opens the shared database file and
// either consumes jobs or takes rate-limit decisions, reporting each event as a JSON line on
// stdout. Bundled by specific.test.ts with esbuild and run with plain node.

import { openSqlite } from '../../../src/adapters/sqlite/database.js';
import { SqliteTableQueue } from '../../../src/adapters/sqlite/table-queue.js';

const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const [mode, file, ...args] = process.argv.slice(2);
  if (!mode || !file) throw new Error('usage: child <consume|hold> <db file> …');
  const db = openSqlite(file);

  if (mode === 'consume' || mode === 'hold') {
    const leaseMs = Number(args[0] ?? 30_000);
    const queue = new SqliteTableQueue(db, { leaseMs, pollMs: 10, graceMs: 100 });
    const consumer = queue.consume(
      async (job) => {
        say({ event: 'start', id: job.documentId, attempt: job.attempt, pid: process.pid });
        // hold: a job that never finishes, so the test can kill this process mid-job.
        if (mode === 'hold') await new Promise<never>(() => {});
        await sleep(1 + Math.random() * 6);
        say({ event: 'end', id: job.documentId, pid: process.pid });
      },
      { concurrency: 4 },
    );
    process.once('SIGTERM', () => {
      void consumer.stop().then(() => {
        db.close();
        process.exit(0);
      });
    });
    say({ event: 'ready', pid: process.pid });
    setInterval(() => {}, 60_000);
    return;
  }

  throw new Error(`unknown mode ${mode}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
