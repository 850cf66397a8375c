// `docindex models pull` and `models list`, run as users run them (the built command in a process
// of its own) against a Hugging Face Hub on 127.0.0.1 (test/helpers/fake-hub.ts) serving tiny
// models the test generates: the pulled folder is what EMBEDDINGS=onnx then loads, a pull cut off
// mid-file resumes with a Range request, a corrupted file or an unknown model leaves no model
// behind, and every failure is one line with the documented exit code.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createEmbedder } from '../../src/start/embedder.js';
import { type FakeHub, type FakeRepo, startFakeHub } from '../helpers/fake-hub.js';
import { runCli } from '../helpers/process.js';
import { writeTinyOnnxModel } from '../helpers/tiny-onnx-model.js';

const root = await mkdtemp(path.join(tmpdir(), 'docindex-models-'));
const ENCODER = 'Tiny/sentence-encoder';
const COMMIT = 'a'.repeat(40);
let hub: FakeHub;
/** The generated model's files, as the fake Hub serves them. */
let encoderFiles: Record<string, Buffer>;
/** The same model's folder, written directly: what the pulled folder must embed like. */
let referenceDir: string;

async function modelFiles(dir: string): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, full)] = await readFile(full);
  }
  return files;
}

beforeAll(async () => {
  hub = await startFakeHub();
  // 64 dimensions make onnx/model.onnx about 7 KB: room to cut a download in the middle.
  referenceDir = (await writeTinyOnnxModel(path.join(root, 'reference'), 64)).dir;
  encoderFiles = {
    ...(await modelFiles(referenceDir)),
    '.gitattributes': '*.onnx filter=lfs diff=lfs merge=lfs -text\n',
    'README.md': '# a tiny sentence encoder\n',
  } as unknown as Record<string, Buffer>;
  hub.repos.set(ENCODER, { commit: COMMIT, files: encoderFiles });
});

afterAll(async () => {
  await hub.close();
  await rm(root, { recursive: true, force: true });
});

let folders = 0;
/** A fresh MODELS_DIR. */
function modelsDir(): string {
  folders += 1;
  return path.join(root, `models-${folders}`);
}

function pull(dir: string, args: string[], env: Record<string, string> = {}) {
  return runCli(['models', 'pull', ...args], {
    MODELS_DIR: dir,
    DATA_DIR: path.join(root, 'data'),
    HF_ENDPOINT: hub.url,
    HF_TOKEN: '',
    ...env,
  });
}

function list(dir: string, json = false) {
  return runCli(['models', 'list', ...(json ? ['--json'] : [])], {
    MODELS_DIR: dir,
    DATA_DIR: path.join(root, 'data'),
  });
}

/** The `NAME=value NAME=value` line the pull printed for the user to copy. */
function envLine(stderr: string): Record<string, string> {
  const line = stderr.split('\n').find((l) => /^\s+(EMBEDDINGS|RERANK)=onnx /.test(l));
  expect(line, stderr).toBeDefined();
  return Object.fromEntries(
    line!
      .trim()
      .split(' ')
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

async function embedWith(env: Record<string, string>, text: string): Promise<number[]> {
  const embedder = await createEmbedder(loadConfig({ DATA_DIR: path.join(root, 'data'), ...env }));
  try {
    const [vector] = await embedder!.embed([text]);
    return [...vector!];
  } finally {
    await embedder!.close();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );
/** A failure is one line: no stack trace, no usage text. */
function expectOneLine(stderr: string) {
  expect(stderr.trim().split('\n'), stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('docindex models pull', () => {
  it('downloads the model, follows the redirect to the CDN, and EMBEDDINGS=onnx embeds with the folder', async () => {
    const dir = modelsDir();
    const seen = hub.requests.length;
    const result = await pull(dir, [ENCODER], { HF_TOKEN: 'hf_reader' });
    expect(result.status, result.stderr).toBe(0);
    const folder = path.join(dir, 'Tiny', 'sentence-encoder');
    expect(result.stdout).toBe(`${folder}\n`);
    expect(result.stderr).toContain(`EMBEDDINGS=onnx EMBEDDINGS_MODEL_DIR=${folder}`);

    // The files transformers.js needs, as the Hub has them, and nothing it does not.
    const pulled = await modelFiles(folder);
    expect(Object.keys(pulled).sort()).toEqual([
      'config.json',
      'docindex-model.json',
      'onnx/model.onnx',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    expect(pulled['onnx/model.onnx']!.equals(encoderFiles['onnx/model.onnx']!)).toBe(true);
    const manifest = JSON.parse(pulled['docindex-model.json']!.toString());
    expect(manifest).toMatchObject({
      repo: ENCODER,
      revision: 'main',
      commit: COMMIT,
      kind: 'embeddings',
      variant: 'fp32',
      endpoint: hub.url,
    });
    expect(manifest.files).toContainEqual({
      path: 'onnx/model.onnx',
      source: 'onnx/model.onnx',
      size: encoderFiles['onnx/model.onnx']!.length,
      sha256: sha256(encoderFiles['onnx/model.onnx']!),
    });
    expect(await readdir(path.join(dir, '.partial'))).toEqual([]);

    // The token went to the Hub, never to the CDN the weights were redirected to.
    const requests = hub.requests.slice(seen);
    const cdn = requests.filter((r) => r.server === 'cdn');
    expect(cdn.map((r) => r.path.split('?')[0])).toEqual([
      `/blobs/${sha256(encoderFiles['onnx/model.onnx']!)}`,
    ]);
    expect(cdn.every((r) => r.authorization === null)).toBe(true);
    expect(
      requests.filter((r) => r.server === 'hub').every((r) => r.authorization === 'Bearer hf_reader'),
    ).toBe(true);
    // Every file comes from the commit the revision resolved to.
    expect(
      requests
        .filter((r) => r.path.includes('/resolve/'))
        .every((r) => r.path.includes(`/resolve/${COMMIT}/`)),
    ).toBe(true);

    // The printed variables, as they are, start the embedder on the pulled folder.
    const env = envLine(result.stderr);
    const vector = await embedWith(env, 'the cat sat on the mat');
    expect(vector).toHaveLength(64);
    expect(vector).toEqual(
      await embedWith({ EMBEDDINGS: 'onnx', EMBEDDINGS_MODEL_DIR: referenceDir }, 'the cat sat on the mat'),
    );

    // `models list` shows it.
    const listed = await list(dir);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toMatch(/^REPO\s+REVISION\s+COMMIT\s+KIND\s+VARIANT\s+SIZE\s+PATH\n/);
    expect(listed.stdout).toMatch(
      new RegExp(
        `^${ENCODER}\\s+main\\s+${COMMIT.slice(0, 12)}\\s+embeddings\\s+fp32\\s+\\d+\\.\\d KiB\\s+${folder}$`,
        'm',
      ),
    );
    const json = JSON.parse((await list(dir, true)).stdout);
    expect(json.models).toEqual([
      expect.objectContaining({
        repo: ENCODER,
        revision: 'main',
        commit: COMMIT,
        kind: 'embeddings',
        path: folder,
      }),
    ]);
    expect(json.interrupted).toEqual([]);

    // Pulling again asks for the file list only and downloads nothing.
    const again = hub.requests.length;
    const second = await pull(dir, [ENCODER, '--json']);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain('nothing downloaded');
    expect(JSON.parse(second.stdout)).toMatchObject({
      repo: ENCODER,
      path: folder,
      downloaded: false,
      env: { EMBEDDINGS: 'onnx', EMBEDDINGS_MODEL_DIR: folder },
    });
    expect(hub.requests.slice(again).map((r) => r.path)).toEqual([
      `/api/models/${ENCODER}/revision/main?blobs=true`,
    ]);
  });

  it('a pull whose connection is cut mid-file resumes from the partial file with a Range request', async () => {
    const dir = modelsDir();
    const folder = path.join(dir, 'Tiny', 'sentence-encoder');
    const weights = encoderFiles['onnx/model.onnx']!;
    hub.cutNext('onnx/model.onnx', 3000);
    const cut = await pull(dir, [ENCODER]);
    expect(cut.status, cut.stderr).toBe(1);
    const failure = cut.stderr.trim().split('\n').at(-1)!;
    expect(failure).toMatch(
      /^docindex: network failure with 127\.0\.0\.1:\d+ during onnx\/model\.onnx .*resume/,
    );
    expect(cut.stderr).not.toMatch(/\n\s+at /);
    // No model yet: the files wait in the partial folder.
    expect(await exists(folder)).toBe(false);
    const part = path.join(dir, '.partial', 'Tiny--sentence-encoder', 'onnx', 'model.onnx.part');
    const kept = (await stat(part)).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(weights.length);
    expect((await list(dir)).stderr).toMatch(/^interrupted: Tiny\/sentence-encoder@main .*resumes it$/m);

    const seen = hub.requests.length;
    const resumed = await pull(dir, [ENCODER]);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`onnx/model.onnx: resuming at`);
    expect(resumed.stderr).toContain('config.json  ');
    expect(resumed.stderr).toMatch(/config\.json .*\(already downloaded\)/);
    const cdn = hub.requests.slice(seen).filter((r) => r.server === 'cdn');
    expect(cdn.map((r) => r.range)).toEqual([`bytes=${kept}-`]);
    expect((await readFile(path.join(folder, 'onnx', 'model.onnx'))).equals(weights)).toBe(true);
    expect(await readdir(path.join(dir, '.partial'))).toEqual([]);
  });

  it('starts the file over when the server ignores the Range request', async () => {
    const dir = modelsDir();
    hub.cutNext('onnx/model.onnx', 2000);
    expect((await pull(dir, [ENCODER])).status).toBe(1);
    hub.ignoreRange = true;
    try {
      const result = await pull(dir, [ENCODER]);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stderr).toMatch(
        /onnx\/model\.onnx: starting over \(127\.0\.0\.1:\d+ ignored the range request\)/,
      );
      const pulled = await readFile(path.join(dir, 'Tiny', 'sentence-encoder', 'onnx', 'model.onnx'));
      expect(pulled.equals(encoderFiles['onnx/model.onnx']!)).toBe(true);
    } finally {
      hub.ignoreRange = false;
    }
  });

  it('one pull of a model at a time; the lock of a pull that died is taken over', async () => {
    const dir = modelsDir();
    await mkdir(path.join(dir, '.partial'), { recursive: true });
    const lockFile = path.join(dir, '.partial', 'Tiny--sentence-encoder.lock');
    // A running process holds it: this test's own.
    await writeFile(lockFile, String(process.pid));
    const busy = await pull(dir, [ENCODER]);
    expect(busy.status).toBe(1);
    expect(busy.stderr.trim().split('\n').at(-1)).toBe(
      `docindex: another docindex models pull of ${ENCODER} is running (process ${process.pid})`,
    );
    // A process that has exited held it.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(lockFile, String(gone));
    const taken = await pull(dir, [ENCODER]);
    expect(taken.status, taken.stderr).toBe(0);
    expect(await exists(lockFile)).toBe(false);
  });

  it('a file whose hash is not the Hub’s fails the pull and leaves no model', async () => {
    const dir = modelsDir();
    hub.corrupted.add('onnx/model.onnx');
    try {
      const result = await pull(dir, [ENCODER]);
      expect(result.status).toBe(1);
      const failure = result.stderr.trim().split('\n').at(-1)!;
      expect(failure).toBe(
        `docindex: onnx/model.onnx of ${ENCODER} does not match the Hub's SHA-256: the download was discarded and no model was installed; run the command again`,
      );
      expect(await exists(path.join(dir, 'Tiny', 'sentence-encoder'))).toBe(false);
      expect(
        await exists(path.join(dir, '.partial', 'Tiny--sentence-encoder', 'onnx', 'model.onnx.part')),
      ).toBe(false);
      expect((await list(dir)).stdout).toMatch(/^no models in /);
      // A small file checked by its git blob id fails the same way.
      hub.corrupted.clear();
      hub.corrupted.add('tokenizer.json');
      const other = await pull(modelsDir(), [ENCODER]);
      expect(other.status).toBe(1);
      expect(other.stderr).toContain(
        "tokenizer.json of Tiny/sentence-encoder does not match the Hub's git blob id",
      );
    } finally {
      hub.corrupted.clear();
    }
    const retried = await pull(dir, [ENCODER]);
    expect(retried.status, retried.stderr).toBe(0);
  });

  it('an unknown repository, revision or host is one clear line and exit 1', async () => {
    const dir = modelsDir();
    const unknownRepo = await pull(dir, ['Nobody/nothing'], { HF_TOKEN: 'hf_reader' });
    expect(unknownRepo.status).toBe(1);
    expectOneLine(unknownRepo.stderr);
    expect(unknownRepo.stderr).toBe(`docindex: no model Nobody/nothing on ${hub.url} (404)\n`);
    const anonymous = await pull(dir, ['Nobody/nothing']);
    expect(anonymous.status).toBe(1);
    expect(anonymous.stderr).toBe(
      `docindex: no model Nobody/nothing on ${hub.url} (401); a private model needs HF_TOKEN\n`,
    );

    const unknownRevision = await pull(dir, [`${ENCODER}@v9`]);
    expect(unknownRevision.status).toBe(1);
    expect(unknownRevision.stderr).toBe(`docindex: ${ENCODER} has no revision v9 (404)\n`);

    // A port nothing listens on: the fake Hub's, once closed.
    const closed = await startFakeHub();
    const deadUrl = closed.url;
    await closed.close();
    const unreachable = await pull(dir, [ENCODER], { HF_ENDPOINT: deadUrl });
    expect(unreachable.status).toBe(1);
    expectOneLine(unreachable.stderr);
    expect(unreachable.stderr).toMatch(
      /^docindex: network failure with 127\.0\.0\.1:\d+ during the file list of Tiny\/sentence-encoder@main \(connection refused, ECONNREFUSED\)\n$/,
    );
    expect(await exists(path.join(dir, 'Tiny'))).toBe(false);
  });

  it('a gated model needs HF_TOKEN (exit 2 without it or with a token that has no access)', async () => {
    const dir = modelsDir();
    hub.repos.set('Gated/encoder', { commit: 'b'.repeat(40), files: encoderFiles, gatedToken: 'hf_granted' });
    const none = await pull(dir, ['Gated/encoder']);
    expect(none.status).toBe(2);
    expect(none.stderr.trim().split('\n').at(-1)).toBe(
      `docindex: Gated/encoder is gated: ask for access on ${hub.url}/Gated/encoder, then set HF_TOKEN to a token of that account (401)`,
    );
    const wrong = await pull(dir, ['Gated/encoder'], { HF_TOKEN: 'hf_other' });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain("Gated/encoder is gated and HF_TOKEN's account has no access yet");
    const granted = await pull(dir, ['Gated/encoder'], { HF_TOKEN: 'hf_granted' });
    expect(granted.status, granted.stderr).toBe(0);
    expect(granted.stdout).toBe(`${path.join(dir, 'Gated', 'encoder')}\n`);
  });

  it('--variant quantized stores the quantized weights as the onnx/model.onnx the adapter loads', async () => {
    const dir = modelsDir();
    const small = await modelFiles((await writeTinyOnnxModel(path.join(root, 'quantized-source'), 16)).dir);
    hub.repos.set('Tiny/two-variants', {
      commit: 'c'.repeat(40),
      files: { ...encoderFiles, 'onnx/model_quantized.onnx': small['onnx/model.onnx']! },
    });
    const result = await pull(dir, ['Tiny/two-variants', '--variant', 'quantized']);
    expect(result.status, result.stderr).toBe(0);
    const folder = path.join(dir, 'Tiny', 'two-variants-quantized');
    expect(result.stdout).toBe(`${folder}\n`);
    expect((await readFile(path.join(folder, 'onnx', 'model.onnx'))).equals(small['onnx/model.onnx']!)).toBe(
      true,
    );
    expect(await exists(path.join(folder, 'onnx', 'model_quantized.onnx'))).toBe(false);
    expect(await embedWith(envLine(result.stderr), 'red apple')).toHaveLength(16);

    // The encoder has no quantized weights: the message says which variant it has.
    const missing = await pull(dir, [ENCODER, '--variant', 'quantized']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(
      /^docindex: Tiny\/sentence-encoder@main is not a transformers.js model docindex can run: it has no onnx\/model_quantized\.onnx; it has --variant fp32 /,
    );
  });

  it('a new commit on the branch replaces the folder whole, keeping the kind it was pulled as', async () => {
    const dir = modelsDir();
    const first = await modelFiles((await writeTinyOnnxModel(path.join(root, 'moving-1'), 24)).dir);
    const second = await modelFiles((await writeTinyOnnxModel(path.join(root, 'moving-2'), 32)).dir);
    hub.repos.set('Tiny/moving', { commit: '1'.repeat(40), files: first });
    const before = await pull(dir, ['Tiny/moving', '--kind', 'rerank']);
    expect(before.status, before.stderr).toBe(0);
    const folder = path.join(dir, 'Tiny', 'moving');

    hub.repos.set('Tiny/moving', { commit: '2'.repeat(40), files: second });
    const after = await pull(dir, ['Tiny/moving']);
    expect(after.status, after.stderr).toBe(0);
    expect(after.stderr).toContain(`it replaced commit ${'1'.repeat(12)}`);
    expect(envLine(after.stderr)).toEqual({ RERANK: 'onnx', RERANK_MODEL_DIR: folder });
    expect((await readFile(path.join(folder, 'onnx', 'model.onnx'))).equals(second['onnx/model.onnx']!)).toBe(
      true,
    );
    const manifest = JSON.parse(await readFile(path.join(folder, 'docindex-model.json'), 'utf8'));
    expect(manifest).toMatchObject({ commit: '2'.repeat(40), kind: 'rerank' });
    expect(await readdir(path.join(dir, '.partial'))).toEqual([]);
  });

  it('a cross-encoder is pulled as a reranker and its RERANK variables printed', async () => {
    const dir = modelsDir();
    hub.repos.set('Tiny/cross-encoder', {
      commit: 'd'.repeat(40),
      files: {
        ...encoderFiles,
        'config.json': JSON.stringify({
          model_type: 'bert',
          architectures: ['BertForSequenceClassification'],
        }),
        'special_tokens_map.json': '',
      },
    });
    const result = await pull(dir, [`Tiny/cross-encoder@${'d'.repeat(40)}`]);
    expect(result.status, result.stderr).toBe(0);
    const folder = path.join(dir, 'Tiny', `cross-encoder@${'d'.repeat(40)}`);
    expect(envLine(result.stderr)).toEqual({ RERANK: 'onnx', RERANK_MODEL_DIR: folder });
    // An empty file is a file too.
    expect(await readFile(path.join(folder, 'special_tokens_map.json'), 'utf8')).toBe('');
    expect((await list(dir)).stdout).toMatch(/^Tiny\/cross-encoder\s+d{40}\s+d{12}\s+rerank\s+fp32\s/m);
  });

  it('a repository without ONNX weights, a folder in the way, or a MODELS_DIR that cannot be written fails clearly', async () => {
    const dir = modelsDir();
    const files = { ...encoderFiles } as FakeRepo['files'];
    delete files['onnx/model.onnx'];
    hub.repos.set('Plain/pytorch-only', { commit: 'e'.repeat(40), files });
    const result = await pull(dir, ['Plain/pytorch-only']);
    expect(result.status).toBe(1);
    expectOneLine(result.stderr);
    expect(result.stderr).toMatch(
      /it has no onnx\/model\.onnx; it has no onnx\/ folder: pick a transformers\.js export/,
    );

    // A folder that is another model, or none of ours, is never replaced.
    const small = await modelFiles((await writeTinyOnnxModel(path.join(root, 'pair-source'), 16)).dir);
    hub.repos.set('Tiny/pair', {
      commit: 'f'.repeat(40),
      files: { ...encoderFiles, 'onnx/model_quantized.onnx': small['onnx/model.onnx']! },
    });
    hub.repos.set('Tiny/pair-quantized', { commit: 'f'.repeat(40), files: encoderFiles });
    expect((await pull(dir, ['Tiny/pair', '--variant', 'quantized'])).status).toBe(0);
    const clash = await pull(dir, ['Tiny/pair-quantized']);
    expect(clash.status).toBe(1);
    expect(clash.stderr.trim().split('\n').at(-1)).toBe(
      `docindex: ${path.join(dir, 'Tiny', 'pair-quantized')} holds Tiny/pair@main (quantized): move it away first`,
    );
    await rm(path.join(dir, 'Tiny', 'pair-quantized', 'docindex-model.json'));
    const foreign = await pull(dir, ['Tiny/pair', '--variant', 'quantized']);
    expect(foreign.status).toBe(1);
    expect(foreign.stderr).toContain(
      'exists and was not pulled by docindex (no docindex-model.json): move it away first',
    );

    // sysfs refuses new folders to everyone, root included: a MODELS_DIR that cannot be written.
    const readOnly = await pull('/sys/docindex-models', [ENCODER]);
    expect(readOnly.status).toBe(2);
    expect(readOnly.stderr.trim().split('\n').at(-1)).toMatch(
      /^docindex: cannot write \/sys\/docindex-models \((EPERM|EACCES|EROFS)\): choose another MODELS_DIR or fix its permissions$/,
    );

    const file = path.join(root, 'not-a-folder');
    await writeFile(file, 'x');
    const blocked = await pull(file, [ENCODER]);
    expect(blocked.status).toBe(1);
    expect(blocked.stderr.trim().split('\n').at(-1)).toMatch(
      /^docindex: .*not-a-folder.* is in the way \((ENOTDIR|EEXIST)\)/,
    );
    expect(blocked.stderr).not.toMatch(/\n\s+at /);
  });
});
