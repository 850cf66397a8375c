// Where a pipeline slot runs: a worker thread, or a child process. Both run worker.ts and speak the
// same messages; the pool sees one interface.
//
// Files are read in child processes. A thread's heap cap is best effort: past it, Node gives the
// thread 16 MB more while it is being stopped, and a single allocation larger than that (a hash
// table doubling, a long string joined) aborts the whole process, server and all. A child process
// past its cap aborts itself alone. Texts (JSON ingest) are chunked by our own code, whose
// allocations grow with a text the API has already bounded, and stay in threads, which start and
// exchange messages for less.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { WORKER_DATA_ENV, type WorkerData, type WorkerReply, type WorkerRequest } from './types.js';
import { workerBootstrap, workerEntry } from './worker-entry.js';

export type HostKind = 'thread' | 'process';

export interface HostOptions {
  data: WorkerData;
  maxHeapMb: number;
  /** Node flags of the host (source maps, profilers, loaders); a thread given none inherits the process's. */
  execArgv: string[] | undefined;
  onMessage: (message: WorkerReply) => void;
  /** Once, when the host has ended, end() or not; `outOfMemory` when it went past its heap cap. */
  onExit: (error: HostExit) => void;
}

/** How a host ended, and whether it was past its heap cap. */
export class HostExit extends Error {
  constructor(
    message: string,
    readonly outOfMemory: boolean,
  ) {
    super(message);
  }
}

export interface PipelineHost {
  readonly kind: HostKind;
  /** A process's id; null for a thread. */
  readonly pid: number | null;
  post(request: WorkerRequest): void;
  /** A busy host keeps the process alive; an idle one does not. */
  ref(): void;
  unref(): void;
  /** Asks the host to exit between two tasks, and stops it outright after `graceMs`. */
  end(graceMs: number): Promise<void>;
}

/** A host reports how it ended once, though Node may tell it twice ('error', then 'exit'). */
function onceOnly(onExit: (exit: HostExit) => void): (exit: HostExit) => void {
  let ended = false;
  return (exit) => {
    if (ended) return;
    ended = true;
    onExit(exit);
  };
}

export function startHost(kind: HostKind, opts: HostOptions): PipelineHost {
  return kind === 'thread' ? new ThreadHost(opts) : new ProcessHost(opts);
}

class ThreadHost implements PipelineHost {
  readonly kind = 'thread';
  readonly pid = null;
  private readonly worker: Worker;
  private exited = false;

  constructor(opts: HostOptions) {
    this.worker = new Worker(workerEntry(), {
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb },
      execArgv: opts.execArgv,
      workerData: opts.data,
    });
    const exit = onceOnly(opts.onExit);
    this.worker.on('message', opts.onMessage);
    this.worker.on('error', (error) => {
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      exit(new HostExit(error.message, outOfMemory));
    });
    this.worker.on('exit', (code) => {
      this.exited = true;
      exit(new HostExit(`the extraction thread exited with code ${code}`, false));
    });
    this.worker.unref();
  }

  post(request: WorkerRequest): void {
    this.worker.postMessage(request);
  }

  ref(): void {
    this.worker.ref();
  }

  unref(): void {
    this.worker.unref();
  }

  end(graceMs: number): Promise<void> {
    return this.exited ? Promise.resolve() : endThread(this.worker, graceMs);
  }
}

/**
 * Ends a thread by asking it to exit, which it does between two of its tasks; terminate() only
 * when it does not within `graceMs` (synchronous code that never yields). terminate() stops a
 * thread wherever it is, and when that is between a zlib stream's creation and its setup (an
 * archive or PDF read opens one per entry or stream), Node aborts the whole process as it frees
 * the stream ("close before init").
 */
export function endThread(worker: Worker, graceMs: number): Promise<void> {
  return endAskingFirst(graceMs, {
    exited: worker.threadId === -1,
    onExit: (done) => worker.once('exit', done),
    ask: () => worker.postMessage({ type: 'exit' } satisfies WorkerRequest),
    force: (done) => void worker.terminate().then(done, done),
  });
}

/** A thread or process to end: asked first, forced when it has not exited within the grace period. */
interface Ending {
  exited: boolean;
  onExit: (done: () => void) => void;
  ask: () => void;
  force: (done: () => void) => void;
}

function endAskingFirst(graceMs: number, ending: Ending): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ending.exited) {
      resolve();
      return;
    }
    let force: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(force);
      resolve();
    };
    ending.onExit(done);
    force = setTimeout(() => ending.force(done), graceMs);
    ending.ask();
  });
}

/** What V8 prints as a process runs out of heap (both of its fatal allocation messages end so). */
const OUT_OF_MEMORY = /JavaScript heap out of memory/;
/** Where V8's report of a fatal error starts. */
const FATAL_REPORT = /\n?<--- Last few GCs --->|\n?#\n# Fatal|FATAL ERROR:/;
/** The end of the child's error output kept to find V8's message in it. */
const STDERR_TAIL_CHARS = 4096;

/**
 * Variables a pipeline process inherits: how Node runs, where it may write (temporary files, the
 * font cache OCR's page rendering keeps), the locale and the time zone.
 */
const INHERITED =
  /^(PATH|HOME|NODE_OPTIONS|NODE_ENV|TMPDIR|TMP|TEMP|TZ|LANG|LANGUAGE|LC_[A-Z]+|XDG_[A-Z_]+|FONTCONFIG_[A-Z_]+)$/;

/**
 * The environment of a pipeline process: none of the server's settings, which hold its secrets
 * (database URLs, keys, tokens). What reads untrusted files needs none of them; it is given its
 * own settings as WorkerData.
 */
export function childEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) if (INHERITED.test(name)) kept[name] = value;
  return kept;
}

class ProcessHost implements PipelineHost {
  readonly kind = 'process';
  private readonly child: ChildProcess;
  private exited = false;
  private held = false;

  constructor(opts: HostOptions) {
    const entry = workerEntry();
    const script =
      entry.protocol === 'file:'
        ? [fileURLToPath(entry)]
        : // From the .ts sources (vitest) the entry is a bootstrap module, run as such.
          ['--input-type=module', '--eval', workerBootstrap()];
    this.child = spawn(
      process.execPath,
      [...(opts.execArgv ?? []), `--max-old-space-size=${opts.maxHeapMb}`, ...script],
      {
        stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
        serialization: 'advanced',
        env: { ...childEnvironment(process.env), [WORKER_DATA_ENV]: JSON.stringify(opts.data) },
      },
    );
    let stderrTail = '';
    let dying = false;
    let outOfMemory = false;
    const stderr = this.child.stderr as Socket;
    stderr.setEncoding('utf8');
    stderr.on('data', (text: string) => {
      // The tail spans the chunks, so a message cut in two is still found.
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_CHARS);
      outOfMemory ||= OUT_OF_MEMORY.test(stderrTail);
      // Passed on as a thread's would be, but for V8's report of a fatal error (its last GCs and
      // native stack): the document's failure says what happened, and the server is not dying.
      const report = dying ? 0 : text.search(FATAL_REPORT);
      if (report !== -1) dying = true;
      const shown = report === -1 ? text : text.slice(0, report);
      if (shown !== '') process.stderr.write(shown);
    });
    stderr.unref();
    const exit = onceOnly(opts.onExit);
    this.child.on('message', opts.onMessage);
    // Adding the listener refs the IPC channel on the next tick: whether the host is held is
    // applied after that.
    process.nextTick(() => (this.held ? this.ref() : this.unref()));
    this.child.on('error', (error) => exit(new HostExit(error.message, false)));
    this.child.on('exit', (code, signal) => {
      this.exited = true;
      // Its last words may still be in the pipe: read them before saying why it ended.
      const report = () => {
        const how = signal ? `was ended by ${signal}` : `exited with code ${code}`;
        exit(new HostExit(`the extraction process ${how}`, outOfMemory));
      };
      if (stderr.readableEnded || stderr.destroyed) report();
      else {
        stderr.once('close', report);
        stderr.once('end', report);
      }
    });
    this.unref();
  }

  get pid(): number | null {
    return this.child.pid ?? null;
  }

  post(request: WorkerRequest): void {
    if (this.child.connected) this.child.send(request);
  }

  ref(): void {
    this.held = true;
    this.child.ref();
    this.child.channel?.ref();
  }

  unref(): void {
    this.held = false;
    this.child.unref();
    this.child.channel?.unref();
  }

  end(graceMs: number): Promise<void> {
    return this.exited ? Promise.resolve() : endProcess(this.child, graceMs);
  }
}

/**
 * Ends a child process by asking it to exit between two tasks, and kills it when it has not within
 * `graceMs`. Killing a process anywhere does this one no harm; asking first lets it exit cleanly.
 */
export function endProcess(child: ChildProcess, graceMs: number): Promise<void> {
  return endAskingFirst(graceMs, {
    exited: child.exitCode !== null || child.signalCode !== null,
    onExit: (done) => child.once('exit', done),
    ask: () => {
      if (child.connected) child.send({ type: 'exit' } satisfies WorkerRequest);
      else child.kill('SIGKILL');
    },
    force: () => child.kill('SIGKILL'),
  });
}
