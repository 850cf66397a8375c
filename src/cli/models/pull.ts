// `docindex models pull`: a transformers.js model from the Hub into MODELS_DIR. It asks the Hub
// which commit the revision is and what files it holds, picks the files docindex's onnx adapters
// load (config, tokenizer, the chosen ONNX weights), downloads each into the model's partial
// folder as `<file>.part`, continuing a part left by an interrupted pull with a Range request,
// and renames it to its name once its size and hash are the Hub's. When every file is there it
// writes the manifest and renames the whole folder into place, so a model folder is complete or
// absent. Pulling a model that is already there and intact downloads nothing.
import { createHash, type Hash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { diskFailure, ModelPullError, onDisk } from './errors.js';
import { type HubClient, type HubFile, type HubModel, networkFailure } from './hub.js';
import {
  checkFolder,
  DEFAULT_VARIANT,
  folderOf,
  isMissing,
  LOADED_ONNX_FILE,
  MANIFEST_FILE,
  type ManifestFile,
  MODEL_VARIANTS,
  type ModelKind,
  type ModelManifest,
  type ModelVariant,
  PARTIAL_DIR,
  PULL_FILE,
  partialFolderOf,
  readManifest,
  VARIANT_FILES,
} from './model-folder.js';

/** Files transformers.js cannot load a text model without. */
const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
/** Files taken when the repository has them: special tokens, and the pooling the embedder reads. */
const OPTIONAL_FILES = ['special_tokens_map.json', '1_Pooling/config.json'];

export interface PullRequest {
  repo: string;
  revision: string;
  /** null: read from the model's config.json (a sequence classifier is a reranker). */
  kind: ModelKind | null;
  /** null: DEFAULT_VARIANT. */
  variant: ModelVariant | null;
}

export type PullEvent =
  | { type: 'plan'; commit: string; folder: string; files: number; bytes: number }
  | { type: 'resume'; file: string; offset: number }
  | { type: 'restart'; file: string; reason: string }
  | { type: 'progress'; file: string; received: number; total: number | null }
  | { type: 'file'; file: string; size: number; reused: boolean }
  | { type: 'warning'; text: string };

export interface PullResult {
  path: string;
  manifest: ModelManifest;
  /** false: the model was already there, intact, at the same commit; nothing was downloaded. */
  downloaded: boolean;
  /** The commit the folder held before, when this pull replaced another one. */
  replacedCommit: string | null;
}

/** A file of the Hub's repository and where it goes in the model folder. */
interface PlannedFile extends HubFile {
  local: string;
}

export async function pullModel(
  hub: HubClient,
  modelsDir: string,
  request: PullRequest,
  onEvent: (event: PullEvent) => void,
): Promise<PullResult> {
  const model = await hub.model(request.repo, request.revision);
  const variant = request.variant ?? DEFAULT_VARIANT;
  const plan = planFiles(model, variant, hub.origin);
  const folder = folderOf(request.repo, request.revision, variant);
  const finalDir = path.join(modelsDir, folder);
  onEvent({
    type: 'plan',
    commit: model.commit,
    folder: finalDir,
    files: plan.length,
    bytes: plan.reduce((sum, file) => sum + (file.size ?? 0), 0),
  });

  const installed = await readInstalled(finalDir);
  if (
    installed &&
    (installed.repo !== request.repo ||
      installed.revision !== request.revision ||
      installed.variant !== variant)
  ) {
    // Folder names can meet (`a/b` quantized and `a/b-quantized`): never replace another model.
    throw new ModelPullError(
      'disk',
      `${finalDir} holds ${installed.repo}@${installed.revision} (${installed.variant}): move it away first`,
    );
  }
  if (installed && installed.commit === model.commit) {
    const problem = await checkFolder(finalDir, installed);
    if (problem === null) {
      const manifest = await keepKind(finalDir, installed, request.kind);
      return { path: finalDir, manifest, downloaded: false, replacedCommit: null };
    }
    onEvent({ type: 'warning', text: `${finalDir}: ${problem}; pulling it again` });
  }

  const partialDir = partialFolderOf(modelsDir, folder);
  await onDisk(modelsDir, () => mkdir(path.join(modelsDir, PARTIAL_DIR), { recursive: true }));
  const unlock = await lock(`${partialDir}.lock`, request.repo);
  try {
    await preparePartial(partialDir, request, variant, model.commit);
    const files: ManifestFile[] = [];
    // Not given: the kind it was pulled as before, else what its config.json says.
    let kind = request.kind ?? installed?.kind ?? null;
    for (const file of plan) {
      files.push(await downloadFile(hub, model, file, partialDir, onEvent));
      if (file.local === 'config.json') {
        const named = await kindNamedBy(path.join(partialDir, 'config.json'));
        if (kind === null) kind = named;
        else if (named === 'rerank' && kind === 'embeddings') {
          onEvent({
            type: 'warning',
            text: `${request.repo}'s config.json names a sequence classifier (a cross-encoder): for RERANK_MODEL_DIR, pull it with --kind rerank`,
          });
        }
      }
    }
    const manifest: ModelManifest = {
      format: 1,
      repo: request.repo,
      revision: request.revision,
      commit: model.commit,
      kind: kind ?? 'embeddings',
      variant,
      endpoint: hub.origin,
      pulled_at: new Date().toISOString(),
      files,
    };
    await onDisk(partialDir, async () => {
      await writeFile(path.join(partialDir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
      await rm(path.join(partialDir, PULL_FILE), { force: true });
    });
    await install(partialDir, finalDir);
    return {
      path: finalDir,
      manifest,
      downloaded: true,
      replacedCommit: installed && installed.commit !== model.commit ? installed.commit : null,
    };
  } finally {
    await unlock();
  }
}

/** The files to download, config.json first and the weights last; a clear error when one is missing. */
function planFiles(model: HubModel, variant: ModelVariant, endpoint: string): PlannedFile[] {
  const byPath = new Map(model.files.map((file) => [file.path, file]));
  const weights = VARIANT_FILES[variant];
  const missing = [...REQUIRED_FILES, weights].filter((name) => !byPath.has(name));
  const where = `${model.repo}@${model.revision}`;
  if (missing.length > 0) {
    const onnx = model.files.map((file) => file.path).filter((name) => /^onnx\/[^/]+\.onnx$/.test(name));
    const others = MODEL_VARIANTS.filter((name) => name !== variant && byPath.has(VARIANT_FILES[name]));
    const hint =
      missing.includes(weights) && others.length > 0
        ? `; it has ${others.map((name) => `--variant ${name}`).join(', ')}`
        : onnx.length === 0
          ? '; it has no onnx/ folder: pick a transformers.js export of it (often under Xenova/ or onnx-community/)'
          : '';
    throw new ModelPullError(
      'not_a_model',
      `${where} is not a transformers.js model docindex can run: it has no ${missing.join(', ')}${hint} (${endpoint}/${model.repo}/tree/${model.revision})`,
    );
  }
  if (byPath.has(`${weights}_data`)) {
    throw new ModelPullError(
      'not_a_model',
      `${where} keeps its ${variant} weights in an external data file (${weights}_data), which docindex's onnx adapters do not load`,
    );
  }
  const chosen = [...REQUIRED_FILES, ...OPTIONAL_FILES.filter((name) => byPath.has(name))];
  return [
    ...chosen.map((name) => ({ ...byPath.get(name)!, local: name })),
    { ...byPath.get(weights)!, local: LOADED_ONNX_FILE },
  ];
}

/** The manifest of the folder that is already there; a folder that is not a pulled model is refused. */
async function readInstalled(finalDir: string): Promise<ModelManifest | null> {
  const manifest = await readManifest(finalDir);
  if (manifest !== null) return manifest;
  const there = await stat(finalDir).then(
    () => true,
    () => false,
  );
  if (there) {
    throw new ModelPullError(
      'disk',
      `${finalDir} exists and was not pulled by docindex (no ${MANIFEST_FILE}): move it away first`,
    );
  }
  return null;
}

/** An intact model pulled again with another --kind: only its manifest changes. */
async function keepKind(
  dir: string,
  manifest: ModelManifest,
  kind: ModelKind | null,
): Promise<ModelManifest> {
  if (kind === null || kind === manifest.kind) return manifest;
  const updated = { ...manifest, kind };
  const file = path.join(dir, MANIFEST_FILE);
  await onDisk(dir, async () => {
    await writeFile(`${file}.tmp`, `${JSON.stringify(updated, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
  });
  return updated;
}

/** The partial folder, emptied first when it holds another commit's (or variant's) files. */
async function preparePartial(
  partialDir: string,
  request: PullRequest,
  variant: ModelVariant,
  commit: string,
): Promise<void> {
  const pullFile = path.join(partialDir, PULL_FILE);
  const before = await readFile(pullFile, 'utf8').then(
    (text) => JSON.parse(text) as { commit?: string; variant?: string },
    () => null,
  );
  await onDisk(partialDir, async () => {
    if (before === null || before.commit !== commit || before.variant !== variant) {
      await rm(partialDir, { recursive: true, force: true });
    }
    await mkdir(partialDir, { recursive: true });
    const record = { repo: request.repo, revision: request.revision, variant, commit };
    await writeFile(pullFile, `${JSON.stringify(record)}\n`);
  });
}

/**
 * One file into the partial folder: kept when an earlier run already verified it, continued from
 * its `.part` when one is there, checked against the Hub's size and hashes, then renamed.
 */
async function downloadFile(
  hub: HubClient,
  model: HubModel,
  file: PlannedFile,
  partialDir: string,
  onEvent: (event: PullEvent) => void,
): Promise<ManifestFile> {
  const target = path.join(partialDir, file.local);
  const part = `${target}.part`;
  const done = await stat(target).catch(() => null);
  if (done !== null) {
    // Verified when it was renamed; checked again, as the folder may have been touched since.
    const kept = new FileHashes(file);
    await onDisk(target, () => kept.read(target, done.size));
    if (kept.mismatch(done.size) === null) {
      onEvent({ type: 'file', file: file.path, size: done.size, reused: true });
      return { path: file.local, source: file.path, size: done.size, sha256: kept.sha256() };
    }
    await onDisk(target, () => rm(target, { force: true }));
  }
  await onDisk(target, () => mkdir(path.dirname(target), { recursive: true }));

  let offset = (await stat(part).catch(() => null))?.size ?? 0;
  if (file.size !== null && offset > file.size) offset = 0;
  let hashes = new FileHashes(file);
  if (offset > 0) await onDisk(part, () => hashes.read(part, offset));

  let total = file.size;
  if (offset === 0 || file.size === null || offset < file.size) {
    const download = await hub.download(model.repo, model.commit, file.path, offset);
    if (offset > 0 && download.start === 0) {
      onEvent({ type: 'restart', file: file.path, reason: `${download.host} ignored the range request` });
      hashes = new FileHashes(file);
      offset = 0;
    } else if (offset > 0) {
      onEvent({ type: 'resume', file: file.path, offset });
    }
    total ??= download.total;
    await receive(download, part, offset, total, hashes, file.path, onEvent).catch(async (error: unknown) => {
      // Bytes that cannot be the file's are not worth resuming from.
      if (error instanceof ModelPullError && error.reason === 'integrity') await rm(part, { force: true });
      throw error;
    });
  }

  const size = (await onDisk(part, () => stat(part))).size;
  if (total !== null && size < total) {
    throw new ModelPullError(
      'network',
      `the download of ${file.path} ended after ${size} of ${total} bytes: run the same command again to resume`,
    );
  }
  const mismatch = hashes.mismatch(size);
  if (mismatch !== null) {
    await onDisk(part, () => rm(part, { force: true }));
    throw new ModelPullError(
      'integrity',
      `${file.path} of ${model.repo} does not match the Hub's ${mismatch}: the download was discarded and no model was installed; run the command again`,
    );
  }
  await onDisk(target, () => rename(part, target));
  onEvent({ type: 'file', file: file.path, size, reused: false });
  return { path: file.local, source: file.path, size, sha256: hashes.sha256() };
}

/**
 * Appends the body to `part` (from `offset`), feeding the hashes. The body is read in flowing mode
 * and each piece written before the next is taken, so when the connection breaks every byte that
 * arrived is on disk for the next run to continue from (a paused stream's buffer would be dropped
 * with the error).
 */
async function receive(
  download: { body: Readable; host: string },
  part: string,
  offset: number,
  total: number | null,
  hashes: FileHashes,
  name: string,
  onEvent: (event: PullEvent) => void,
): Promise<void> {
  const fd = await onDisk(part, async () => openSync(part, offset > 0 ? 'a' : 'w'));
  let received = offset;
  try {
    await new Promise<void>((resolve, reject) => {
      const fail = (error: unknown) => {
        download.body.destroy();
        reject(error);
      };
      download.body.on('data', (chunk: Buffer) => {
        if (total !== null && received + chunk.length > total) {
          fail(
            new ModelPullError(
              'integrity',
              `${download.host} sent more than the ${total} bytes of ${name}: the download was discarded; run the command again`,
            ),
          );
          return;
        }
        try {
          writeSync(fd, chunk);
        } catch (error) {
          fail(diskFailure(error, part));
          return;
        }
        hashes.update(chunk);
        received += chunk.length;
        onEvent({ type: 'progress', file: name, received, total });
      });
      download.body.on('end', resolve);
      download.body.on('error', (error) =>
        reject(
          networkFailure(
            error,
            download.host,
            name,
            `${received} bytes of it are kept; run the same command again to resume`,
          ),
        ),
      );
    });
    await onDisk(part, async () => fsyncSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** SHA-256 of a file's content, and its git blob id when the Hub gives that instead. */
class FileHashes {
  private readonly sha = createHash('sha256');
  private readonly git: Hash | null;
  private digest: string | null = null;

  constructor(private readonly file: HubFile) {
    // A git blob id hashes the length first: it can be checked only when the Hub gives the size too.
    this.git = file.gitBlobId !== null && file.size !== null ? createHash('sha1') : null;
    this.git?.update(`blob ${file.size}\0`);
  }

  update(chunk: Buffer): void {
    this.sha.update(chunk);
    this.git?.update(chunk);
  }

  /** Feeds the first `length` bytes already in `file`. */
  async read(file: string, length: number): Promise<void> {
    if (length === 0) return;
    for await (const chunk of createReadStream(file, { start: 0, end: length - 1 }))
      this.update(chunk as Buffer);
  }

  sha256(): string {
    this.digest ??= this.sha.digest('hex');
    return this.digest;
  }

  /** What differs from the Hub's listing (`size`, `SHA-256`, `git blob id`); null when nothing does. */
  mismatch(size: number): string | null {
    if (this.file.size !== null && size !== this.file.size)
      return `size (${size} bytes, not ${this.file.size})`;
    if (this.file.sha256 !== null && this.sha256() !== this.file.sha256) return 'SHA-256';
    if (this.git !== null && this.git.digest('hex') !== this.file.gitBlobId) return 'git blob id';
    return null;
  }
}

/** `rerank` when config.json names a sequence classifier (a cross-encoder), else `embeddings`. */
async function kindNamedBy(configFile: string): Promise<ModelKind> {
  try {
    const config = JSON.parse(await readFile(configFile, 'utf8')) as { architectures?: unknown };
    const architectures = Array.isArray(config.architectures) ? config.architectures : [];
    return architectures.some(
      (name) => typeof name === 'string' && name.endsWith('ForSequenceClassification'),
    )
      ? 'rerank'
      : 'embeddings';
  } catch {
    return 'embeddings';
  }
}

/**
 * Moves the complete partial folder into place. A folder of another commit that was there is
 * renamed aside first and removed after, so at every moment the model's folder is either the old
 * model or the new one (or, between two renames, absent), never a mix.
 */
async function install(partialDir: string, finalDir: string): Promise<void> {
  await onDisk(finalDir, () => mkdir(path.dirname(finalDir), { recursive: true }));
  const aside = `${partialDir}.replaced`;
  const replacing = await stat(finalDir).then(
    () => true,
    () => false,
  );
  await onDisk(finalDir, async () => {
    if (replacing) {
      await rm(aside, { recursive: true, force: true });
      await rename(finalDir, aside);
    }
    try {
      await rename(partialDir, finalDir);
    } catch (error) {
      if (replacing) await rename(aside, finalDir).catch(() => {});
      throw error;
    }
    if (replacing) await rm(aside, { recursive: true, force: true });
  });
}

/** Holds `<partial folder>.lock` (the process id) while the pull runs; a dead holder's lock is taken over. */
async function lock(file: string, repo: string): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: 'wx' });
      return () => rm(file, { force: true });
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST'))
        throw diskFailure(error, file);
    }
    const holder = Number(await readFile(file, 'utf8').catch(() => ''));
    if (attempt > 0 || isAlive(holder)) {
      throw new ModelPullError(
        'busy',
        `another docindex models pull of ${repo} is running${holder > 0 ? ` (process ${holder})` : ''}`,
      );
    }
    await rm(file, { force: true }).catch((error: unknown) => {
      if (!isMissing(error)) throw diskFailure(error, file);
    });
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}
