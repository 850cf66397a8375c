// `docindex serve` on a fresh DATA_DIR, as a user first runs it: a port that is taken is one line
// and a non-zero exit, with no organisation made behind the user's back; the first start that
// listens shows the first key with the console and docs addresses; a later one says how to get a key.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServer, stopServer } from '../helpers/process.js';

describe('the first start of docindex serve', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-first-start-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a taken port: one line naming it and PORT, exit ≠ 0, and the first key is not spent', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const failed = await runCli(['serve'], {
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      expect(failed.status).toBe(2);
      expect(failed.stderr).toBe(
        `docindex: cannot listen on 127.0.0.1:${port}: port ${port} is already in use; stop what listens there or set PORT to a free port\n`,
      );
      expect(failed.stdout).toBe('');
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }

    const first = await startServer(['serve', '--no-worker'], { DATA_DIR: dataDir });
    let apiKey: string | undefined;
    try {
      await waitForLine(first.stdout, /^ {2}search: /m);
      const out = first.stdout();
      apiKey = /^ {2}api_key: (dix_\S+)$/m.exec(out)?.[1];
      expect(apiKey, out).toBeDefined();
      expect(out).toContain(`\n  console:  ${first.baseUrl}/console\n`);
      expect(out).toContain(`\n  API docs: ${first.baseUrl}/docs (OpenAPI: ${first.baseUrl}/openapi.json)\n`);
      expect(out).toContain('\n  search:   keyword, embeddings none, rerank none\n');
      expect(out).not.toContain('docindex orgs list');
      // The addresses it prints are the ones it serves.
      expect((await fetch(`${first.baseUrl}/console/`)).status).toBe(200);
      expect((await fetch(`${first.baseUrl}/docs`)).status).toBe(200);
    } finally {
      await stopServer(first);
    }

    const later = await startServer(['serve', '--no-worker'], { DATA_DIR: dataDir });
    try {
      await waitForLine(later.stdout, /^ {2}API keys: /m);
      expect(later.stdout()).not.toMatch(/api_key:/);
      expect(later.stdout()).toContain(
        '\n  API keys: `docindex orgs list` names the organisations; `docindex keys create --org ORG_ID` makes a new key\n',
      );
      const usage = await fetch(`${later.baseUrl}/v1/usage`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(usage.status).toBe(200);
    } finally {
      await stopServer(later);
    }
  });
});

/** Resolves once `read()` holds a line matching `pattern` (the banner is written after the listening line). */
async function waitForLine(read: () => string, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 200 && !pattern.test(read()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(read()).toMatch(pattern);
}
