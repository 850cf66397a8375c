// `docindex reindex --vectors` on a running embedded service: every document's vectors are due
// again, the service's workers re-embed them in the background (the provider sees the texts
// again) and they turn ready; without a provider the command says there is nothing to do.
// Spawns bin/docindex.js, which runs the build (dist/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../contract/support.js';
import { EmbeddingsServer } from '../helpers/embeddings-server.js';
import { type Harness, scaleOutBackend, startHarness } from '../helpers/harness.js';
import { runCli } from '../helpers/process.js';

let provider: EmbeddingsServer;
let h: Harness;
let env: Record<string, string>;

beforeAll(async () => {
  provider = await new EmbeddingsServer({ dimensions: 16 }).start();
  env = { EMBEDDINGS: 'openai', EMBEDDINGS_URL: provider.url, EMBEDDINGS_MODEL: 'test-embedding' };
  h = await startHarness({ env });
});

afterAll(async () => {
  await h?.close();
  await provider?.stop();
});

describe.skipIf(scaleOutBackend)('docindex reindex --vectors', () => {
  it('re-embeds every document in the background', async () => {
    const ids = await h.ingest(h.orgA, ['first text about otters', 'second text about otters']);
    await h.waitForDone(h.orgA, ids);
    const vectorsOf = async () =>
      (await h.request('GET', `/v1/documents?ids=${ids.join(',')}`))
        .json()
        .documents.map((d: { vectors: { status: string } }) => d.vectors.status);
    await waitFor(
      'vectors ready',
      async () => (await vectorsOf()).every((s: string) => s === 'ready'),
      30_000,
      50,
    );
    const seenBefore = provider.textsSeen;

    const result = await runCli(['reindex', '--vectors'], { ...env, DATA_DIR: h.dataDir });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('2 documents will be re-embedded with openai model test-embedding');

    await waitFor(
      'vectors ready again',
      async () => (await vectorsOf()).every((s: string) => s === 'ready'),
      30_000,
      50,
    );
    // The provider was asked for both documents' texts again.
    const after = provider.requests.flatMap((r) => r.input).slice(seenBefore);
    expect(after).toEqual(expect.arrayContaining(['first text about otters', 'second text about otters']));
  });

  it('without a provider there is nothing to re-embed', async () => {
    const result = await runCli(['reindex', '--vectors'], { DATA_DIR: h.dataDir, EMBEDDINGS: 'none' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('EMBEDDINGS=none');
  });
});
