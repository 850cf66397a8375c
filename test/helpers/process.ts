// Child processes for tests: any command run to its end (runCommand), the built `docindex` command
// the way users run it (runCli), and servers and workers left running (startServer, startWorker)
// for CLI and crash tests. `npm test` builds first, so dist/ is current.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/docindex.js', import.meta.url));

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Killed (SIGKILL) after this long; its status is then -1. */
  timeoutMs?: number;
}

/**
 * Runs a command to its end without blocking the event loop. A test worker whose loop is held
 * by a synchronous child (spawnSync) for a minute loses its link to the test runner, which then
 * fails the whole run; this is the only way tests run a child to completion.
 */
export function runCommand(
  command: string,
  args: string[],
  { cwd, env, timeoutMs = 60_000 }: CommandOptions = {},
): Promise<CommandResult> {
  const child = spawn(command, args, { cwd, env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ status: -1, stdout, stderr: `${stderr}${error.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code ?? -1, stdout, stderr });
    });
  });
}

/** Runs the `docindex` command to its end, as a user would. */
export function runCli(args: string[], env: Record<string, string>): Promise<CommandResult> {
  return runCommand(process.execPath, [BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    timeoutMs: 180_000,
  });
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  stdout: () => string;
}

/** Starts `docindex <args>` and resolves once it prints its listening address. */
export function startServer(
  args: string[],
  env: Record<string, string>,
  // Generous: on a loaded 2-core machine a cold start (module loading, migrations) can take tens of seconds.
  timeoutMs = 90_000,
  /** Node's own flags, before the script (`node --max-old-space-size=4096 bin/docindex.js …`). */
  nodeFlags: string[] = [],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeFlags, BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${timeoutMs} ms\n${out}\n${err}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /docindex listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, baseUrl: match[1]!.replace(/\s.*$/, ''), stdout: () => out });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}\n${out}\n${err}`));
    });
  });
}

export function stopServer(server: ServerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve();
    server.child.removeAllListeners('exit');
    server.child.once('exit', () => resolve());
    server.child.kill(signal);
  });
}

export interface WorkerProcess {
  child: ChildProcess;
  stderr: () => string;
}

/** Starts `docindex worker` and resolves once it logs that it started. */
export function startWorker(env: Record<string, string>, timeoutMs = 30_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker did not start within ${timeoutMs} ms\n${err}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.includes('docindex worker started')) {
        clearTimeout(timer);
        resolve({ child, stderr: () => err });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}\n${err}`));
    });
  });
}

export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 15_000,
): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill(signal);
  });
}
