// Runs the real docindex server as a child process (`node bin/docindex.js serve`, the way users run
// it) on 127.0.0.1 with a fresh DATA_DIR, and talks to it over HTTP. Every benchmark that measures
// the service end to end starts its own server, so no run inherits another's queue or database.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { asciiCorpus } from './corpus.js';
import { projectRoot, sleep } from './lib.js';

export interface DocindexServer {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  apiKey: string;
  orgId: string;
  dataDir: string;
  /** The last 64 KB the server wrote to stderr (its logs), for failure reports. */
  stderr(): string;
  stop(): Promise<void>;
}

// Variables that would switch the child to scale-out or point it at shared state: a bench server
// is always embedded on its own DATA_DIR, whatever the shell running the bench has set.
const INHERITED_ENV_DROPPED = ['DATABASE_URL', 'REDIS_URL', 'BLOB_DIR', 'DATABASE_SCHEMA', 'REDIS_PREFIX'];
const STDERR_KEEP = 64 * 1024;

const live = new Set<ChildProcess>();
// A benchmark that throws half-way, or is interrupted (Ctrl-C, kill), must not leave its server
// running after the bench exits. A signal's default action would end the process without 'exit'.
const killServers = () => {
  for (const child of live) child.kill('SIGKILL');
};
process.once('exit', killServers);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killServers();
    process.kill(process.pid, signal);
  });
}

/** Stops a process with SIGTERM and waits for it to exit; SIGKILL after `graceMs`. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `docindex worker` with `env` as its whole environment (a scale-out server's variables and
 * DATA_DIR); resolves once it has started. The caller stops it (stopProcess).
 */
export function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(projectRoot(), 'bin', 'docindex.js'), 'worker'], {
    env: { ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.length > STDERR_KEEP) err = err.slice(-STDERR_KEEP);
      if (err.includes('docindex worker started')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${err.slice(-2000)}`)));
  });
}

/** Starts `docindex serve [args]` and resolves once it prints its address and first API key. */
export async function startDocindex(
  options: { env?: Record<string, string>; args?: string[]; timeoutMs?: number } = {},
): Promise<DocindexServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-bench-'));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of INHERITED_ENV_DROPPED) delete env[name];
  Object.assign(env, {
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    // Benchmarks send far more than a tenant's default 600 requests per minute.
    DEFAULT_RATE_LIMIT_RPM: '10000000',
    UNAUTHENTICATED_RATE_LIMIT_RPM: '10000000',
    ...options.env,
  });
  const bin = path.join(projectRoot(), 'bin', 'docindex.js');
  // BENCH_CPU_PROF=<dir>: every server writes a V8 CPU profile there when it stops, for finding
  // the hot path behind a missed goal (open it in Chrome DevTools or speedscope).
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const child = spawn(process.execPath, [...profile, bin, 'serve', ...(options.args ?? [])], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString()).slice(-STDERR_KEEP);
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    live.delete(child);
    rmSync(dataDir, { recursive: true, force: true });
  };

  const timeoutMs = options.timeoutMs ?? 60_000;
  try {
    return await new Promise<DocindexServer>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server did not start within ${timeoutMs} ms\n${out}\n${err}`)),
        timeoutMs,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`server exited with ${code ?? signal} before listening\n${out}\n${err.slice(-4000)}`),
        );
      });
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const listening = /docindex listening on (http:\/\/\S+)/.exec(out);
        const key = /api_key: (dix_\S+)/.exec(out);
        const org = /org_id: +(\S+)/.exec(out);
        if (listening && key && org) {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          resolve({
            child,
            pid: child.pid!,
            baseUrl: listening[1]!,
            apiKey: key[1]!,
            orgId: org[1]!,
            dataDir,
            stderr: () => err,
            stop,
          });
        }
      });
    });
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A JSON request to the server with its API key; throws on a status other than `expect`. */
export async function callApi<T = unknown>(
  server: DocindexServer,
  method: string,
  url: string,
  body?: unknown,
  expect = 200,
): Promise<T> {
  const res = await fetch(`${server.baseUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${server.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status !== expect) {
    throw new Error(
      `${method} ${url.split('?')[0]} answered ${res.status} (expected ${expect}): ${text.slice(0, 500)}`,
    );
  }
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export interface IngestAck {
  document_ids: string[];
}

export interface DocumentStatus {
  id: string;
  status: 'queued' | 'processing' | 'ready' | 'failed';
  error: { code: string; message: string } | null;
  chunk_count: number | null;
}

/** Batch status of up to any number of ids, 100 per request (the API's batch limit). */
export async function documentStatuses(server: DocindexServer, ids: string[]): Promise<DocumentStatus[]> {
  const requests: Promise<{ documents: DocumentStatus[] }>[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const batch = ids.slice(i, i + 100);
    requests.push(callApi(server, 'GET', `/v1/documents?limit=100&ids=${batch.join(',')}`));
  }
  return (await Promise.all(requests)).flatMap((r) => r.documents);
}

/**
 * Polls until every id is ready or failed, the way a careful client does: one batch request (the
 * 100 oldest pending ids) per interval, and the next batch at once when a whole batch is done —
 * so polling costs the server about one request per interval, and the end is seen within one
 * interval. Resolves with each document's last status and the time (performance.now()) of the
 * poll that saw the last one finish.
 */
export async function waitUntilDone(
  server: DocindexServer,
  ids: () => string[],
  options: { expected: number; timeoutMs: number; intervalMs?: number },
): Promise<{ done: Map<string, DocumentStatus>; finishedAt: number }> {
  const done = new Map<string, DocumentStatus>();
  const deadline = performance.now() + options.timeoutMs;
  while (performance.now() < deadline) {
    const batch = ids()
      .filter((id) => !done.has(id))
      .slice(0, 100);
    let finishedBatch = false;
    if (batch.length > 0) {
      const { documents } = await callApi<{ documents: DocumentStatus[] }>(
        server,
        'GET',
        `/v1/documents?limit=100&ids=${batch.join(',')}`,
      );
      for (const doc of documents) {
        if (doc.status === 'ready' || doc.status === 'failed') done.set(doc.id, doc);
      }
      finishedBatch = batch.every((id) => done.has(id));
    }
    if (done.size >= options.expected) return { done, finishedAt: performance.now() };
    if (!finishedBatch) await sleep(options.intervalMs ?? 50);
  }
  throw new Error(
    `only ${done.size} of ${options.expected} documents were ready or failed after ${options.timeoutMs} ms`,
  );
}

/**
 * A process and its live descendants (Linux: /proc/<pid>/task/<tid>/children). Pipeline threads
 * that read files are child processes: what a server or a pool uses includes theirs.
 */
export function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${tree[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${tree[i]}/task/${task}/children`, 'utf8').trim();
        if (children !== '') tree.push(...children.split(' ').map(Number));
      } catch {
        // The thread or process ended while it was read.
      }
    }
  }
  return tree;
}

/**
 * Resident set size in bytes of a process and its live descendants (Linux: VmRSS in
 * /proc/<pid>/status, summed; pages two processes share count twice).
 */
export function residentBytes(pid: number): number {
  let total = 0;
  for (const member of processTree(pid)) {
    let status: string;
    try {
      status = readFileSync(`/proc/${member}/status`, 'utf8');
    } catch {
      if (member === pid) throw new Error(`no process ${pid}`);
      continue;
    }
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    // A process that has exited and not yet been waited for has no memory left to count.
    if (!match && member === pid) throw new Error(`no VmRSS for process ${pid}`);
    total += Number(match?.[1] ?? 0) * 1024;
  }
  return total;
}

/**
 * CPU time a live process has used so far, in ms: every thread of it, its descendants alive and
 * those it has waited for (Linux: utime + stime + cutime + cstime in /proc/<pid>/stat, in clock
 * ticks of 10 ms). Less disturbed by other work on the machine than wall time.
 */
export function cpuMilliseconds(pid: number): number {
  let ticks = 0;
  for (const member of processTree(pid)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${member}/stat`, 'utf8');
    } catch {
      if (member === pid) throw new Error(`no process ${pid}`);
      continue;
    }
    // After the command name (which may hold spaces): state is field 3, utime 14 to cstime 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks * 10;
}

const MIB = 1024 * 1024;
const BOUNDARY = '----docindex-bench-boundary';

let uploadBlock: Buffer | null = null;

/**
 * Builds the prose that streamUpload repeats (hundreds of milliseconds of work, once). A
 * benchmark that times requests while it uploads calls this first, so the stall is not timed.
 */
export function prepareUploads(): Buffer {
  uploadBlock ??= Buffer.from(asciiCorpus().slice(0, MIB).padEnd(MIB, ' '), 'latin1');
  return uploadBlock;
}

/** A text file's bytes: ASCII prose repeated to `bytes` (ASCII, so a cut anywhere is still valid text). */
function* fileBody(bytes: number): Generator<Buffer> {
  const block = prepareUploads();
  let left = bytes;
  while (left > 0) {
    const take = Math.min(left, block.length);
    yield take === block.length ? block : block.subarray(0, take);
    left -= take;
  }
}

/**
 * POSTs one multipart text file of `bytes` bytes to /v1/ingest/file, generated on the fly and
 * streamed (never held whole); resolves with the status and body.
 */
export function streamUpload(
  server: DocindexServer,
  bytes: number,
  filename: string,
  apiKey = server.apiKey,
): Promise<{ status: number; body: string }> {
  return streamFileUpload(
    server,
    { filename, contentType: 'text/plain', bytes, parts: fileBody(bytes) },
    apiKey,
  );
}

/** A file to upload: its exact length up front (the request's Content-Length) and its bytes in parts. */
export interface UploadFile {
  filename: string;
  contentType: string;
  bytes: number;
  parts: Iterable<Uint8Array>;
}

/** POSTs one multipart file to /v1/ingest/file, its parts streamed as they are generated. */
export function streamFileUpload(
  server: DocindexServer,
  file: UploadFile,
  apiKey = server.apiKey,
): Promise<{ status: number; body: string }> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const url = new URL('/v1/ingest/file', server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': head.length + file.bytes + tail.length,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    Readable.from(
      (function* () {
        yield head;
        yield* file.parts;
        yield tail;
      })(),
    ).pipe(req);
  });
}

/** A second organisation on a running embedded server, made with the `docindex` command. */
export async function createOrg(
  server: DocindexServer,
  name: string,
): Promise<{ orgId: string; apiKey: string }> {
  const bin = path.join(projectRoot(), 'bin', 'docindex.js');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' };
  for (const variable of INHERITED_ENV_DROPPED) delete env[variable];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bin, 'orgs', 'create', '--name', name, '--rate-limit-rpm', '10000000', '--json'],
    {
      env,
    },
  );
  const created = JSON.parse(stdout) as { org_id: string; api_key: string };
  return { orgId: created.org_id, apiKey: created.api_key };
}
