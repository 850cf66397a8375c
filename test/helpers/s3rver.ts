// Starts s3rver (npm package, a devDependency) as a child process on 127.0.0.1 for the S3 blob
// store's tests. Without the package the S3 suites skip and say so, unless REQUIRE_S3_TESTS=1
// (CI), where they fail instead: like the scale-out suites, they can never silently not run there.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

export const S3_REQUIRED = process.env.REQUIRE_S3_TESTS === '1';
const SCRIPT = fileURLToPath(new URL('./s3rver-server.mjs', import.meta.url));

/** Why s3rver cannot run here, or null when it can. */
export function s3rverProblem(): string | null {
  try {
    createRequire(import.meta.url).resolve('s3rver');
    return null;
  } catch {
    return 's3rver is not installed (npm install brings it: it is a devDependency)';
  }
}

export interface S3rverProcess {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /** The folder s3rver keeps buckets and objects in. */
  directory: string;
  /** A bucket that exists from the start. */
  bucket: string;
  stop(): Promise<void>;
}

export async function startS3rver(timeoutMs = 20_000): Promise<S3rverProcess> {
  const directory = mkdtempSync(path.join(tmpdir(), 'docindex-s3rver-'));
  // s3rver seals ListObjectsV2 continuation tokens with DES, which OpenSSL 3 keeps in its legacy
  // provider: without it, every listing past its first page is a 500.
  const child: ChildProcess = spawn(process.execPath, ['--openssl-legacy-provider', SCRIPT, directory], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`s3rver did not start within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`s3rver exited (${code}) before listening: ${stderr}`));
    });
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    directory,
    bucket: 'docindex-test',
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** Runs `body` as `title` when s3rver is available; otherwise skips (or fails under REQUIRE_S3_TESTS=1). */
export function describeS3(title: string, body: () => void): void {
  const problem = s3rverProblem();
  if (problem === null) {
    describe(title, body);
  } else if (!S3_REQUIRED) {
    console.warn(`S3 tests skipped: ${problem} (${title})`);
    describe.skip(title, body);
  } else {
    describe(title, () => {
      it('has s3rver', () => {
        throw new Error(`${title}: ${problem} — REQUIRE_S3_TESTS=1 forbids skipping`);
      });
    });
  }
}
