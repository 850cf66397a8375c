// A document's job id is the document id, so BullMQ skips an add while that job exists. While it
// waits that is right: it has not started, and will read the newest version when it does. While
// it runs it is not: the run may be past its last look at the document, and the new version would
// be left to the reconciler. So an enqueue marks each document whose job holds a lock (is running)
// as due again, and the worker that finishes the job takes the mark and adds the job anew.
//
// Ordering makes it whole: the mark is set in one script with the lock check, and BullMQ removes
// the lock in the same script that finishes (and here removes) the job. A mark set before that
// is taken by the finishing worker, which adds afterwards; an enqueue after it finds no job and
// adds it itself.
import type { Queue } from 'bullmq';
import { LuaCommands } from './lua-commands.js';

/**
 * KEYS: the queue's key prefix, then the marks' (markPrefix); ARGV: how long a mark lives (ms),
 * then a job id and its traceparent ('' for none) per job.
 */
const MARK_LUA = `
for i = 2, #ARGV, 2 do
  if redis.call('EXISTS', KEYS[1] .. ARGV[i] .. ':lock') == 1 then
    redis.call('SET', KEYS[2] .. ARGV[i], ARGV[i + 1], 'PX', ARGV[1])
  end
end
`;

/** KEYS: a job's mark; returns its traceparent ('' for none), or nil when unmarked. */
const TAKE_LUA = `
local mark = redis.call('GET', KEYS[1])
if mark then redis.call('DEL', KEYS[1]) end
return mark
`;

const MARK = 'docindexRerunMark';
const TAKE = 'docindexRerunTake';

/**
 * A mark outlives any run; one left behind (its worker died before taking it, and the reconciler
 * queued the document since) costs one run that finds nothing to do.
 */
const MARK_TTL_MS = 24 * 60 * 60 * 1000;

export interface Rerun {
  /** The traceparent of the enqueue that asked for it, or null. */
  traceparent: string | null;
}

export class Reruns {
  private readonly scripts: LuaCommands;

  constructor(private readonly queue: Queue) {
    this.scripts = new LuaCommands(queue, {
      [MARK]: { numberOfKeys: 2, lua: MARK_LUA },
      [TAKE]: { numberOfKeys: 1, lua: TAKE_LUA },
    });
  }

  /** Where a job's mark is kept: this prefix, then the job id. */
  private get markPrefix(): string {
    return `${this.queue.keys[''] ?? ''}rerun:`;
  }

  /** Marks the jobs among these that are running now. */
  async mark(jobs: ReadonlyArray<{ documentId: string; traceparent?: string | null }>): Promise<void> {
    const args: Array<string | number> = [this.queue.keys[''] ?? '', this.markPrefix, MARK_TTL_MS];
    for (const job of jobs) args.push(job.documentId, job.traceparent ?? '');
    await this.scripts.run(MARK, args);
  }

  /** Takes the mark of a job that just finished: null when no enqueue came while it ran. */
  async take(documentId: string): Promise<Rerun | null> {
    const mark = (await this.scripts.run(TAKE, [this.markPrefix + documentId])) as string | null;
    return mark === null || mark === undefined ? null : { traceparent: mark === '' ? null : mark };
  }
}
