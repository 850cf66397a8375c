// `docindex serve` logs the providers queries will call when it starts: each one's kind, model and
// URL, the URL without its credentials or query string (where API keys and signatures hide).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCommand } from '../helpers/process.js';

const dataDir = await mkdtemp(path.join(tmpdir(), 'docindex-provider-log-'));
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('the start-up log', () => {
  it('names the active providers, their URLs without secrets', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        HOST: '127.0.0.1',
        PORT: '0',
        DATA_DIR: dataDir,
        EMBEDDINGS: 'openai',
        EMBEDDINGS_URL: 'http://embed-user:embed-secret@127.0.0.1:9/v1?api-key=query-secret',
        EMBEDDINGS_MODEL: 'nomic-embed-text',
        EMBEDDINGS_API_KEY: 'header-secret',
        RERANK: 'http',
        RERANK_URL: 'http://127.0.0.1:9/v2?token=rerank-secret',
        RERANK_MODEL: 'rerank-v3.5',
        RERANK_API_KEY: 'rerank-key-secret',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no providers line within 30 s:\n${stderr}`)),
          30_000,
        );
        child.stderr.on('data', () => {
          const found = stderr.split('\n').find((l) => l.includes('"msg":"providers"'));
          if (found) {
            clearTimeout(timer);
            resolve(found);
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${stderr}`)));
      });
      expect(JSON.parse(line)).toMatchObject({
        embeddings: { kind: 'openai', model: 'nomic-embed-text', url: 'http://127.0.0.1:9/v1' },
        rerank: { kind: 'http', model: 'rerank-v3.5', url: 'http://127.0.0.1:9/v2' },
      });
      expect(stderr).not.toMatch(/secret/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('is a serving process’s: a command that runs and exits (orgs list) prints no such line, and an empty list says where to look', async () => {
    const empty = path.join(dataDir, 'empty');
    const run = await runCommand(process.execPath, [BIN, 'orgs', 'list'], {
      env: { ...process.env, LOG_LEVEL: 'info', DATA_DIR: empty, EMBEDDINGS: 'none', RERANK: 'none' },
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^ORG ID/);
    expect(run.stderr).not.toContain('"msg":"providers"');
    expect(run.stderr).toContain('no organisations here: is this the server’s DATA_DIR or DATABASE_URL?');
  });
});
