// A process that embedded with the onnx provider exits by itself when its work is done (a CLI
// command, a stopped server): left to Node's own exit teardown, the thread that ran an ONNX
// session would keep the process alive for ever. Runs the built code (dist/), as `docindex` does.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/process.js';
import { writeTinyOnnxModel } from '../helpers/tiny-onnx-model.js';

const EMBEDDER = fileURLToPath(
  new URL('../../dist/src/adapters/embeddings/onnx/onnx-embedder.js', import.meta.url),
);
const root = await mkdtemp(path.join(tmpdir(), 'docindex-onnx-exit-'));
afterAll(() => rm(root, { recursive: true, force: true }));

describe('onnx embedder in a process of its own', () => {
  it.each([
    ['after close()', 'await embedder.close();'],
    ['without close()', ''],
  ])('the process exits once it has nothing left to do (%s)', async (_name, closing) => {
    const model = await writeTinyOnnxModel(path.join(root, `model-${closing ? 'closed' : 'open'}`));
    const script = `
      const { OnnxEmbedder } = await import(${JSON.stringify(EMBEDDER)});
      const embedder = new OnnxEmbedder({ modelDir: ${JSON.stringify(model.dir)}, batchSize: 4 });
      const vectors = await embedder.embed(['the cat sat', 'a dog']);
      ${closing}
      console.log(JSON.stringify(vectors.map((v) => v.length)));
    `;
    // A process that does not exit is killed after 30 s, and its status is then -1.
    const result = await runCommand(process.execPath, ['--input-type=module', '-e', script], {
      timeoutMs: 30_000,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('[8,8]');
    expect(result.status).toBe(0);
  });
});
