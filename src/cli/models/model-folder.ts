// The models in MODELS_DIR as `docindex models` keeps them: one folder per model
// (`Xenova/bge-small-en-v1.5`, `Xenova/bge-small-en-v1.5-quantized`, `…@v2` for another revision
// than main), each complete or absent: a pull downloads into `.partial/<name>/` and renames the
// folder into place only once every file is verified, with a manifest (docindex-model.json) that
// records where it came from and every file's size and SHA-256. A folder without a manifest is
// not one of ours and is never listed or replaced.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ModelPullError } from './errors.js';

export const MANIFEST_FILE = 'docindex-model.json';
/** Downloads in progress and interrupted ones, one folder per model; never listed as models. */
export const PARTIAL_DIR = '.partial';

export const MODEL_KINDS = ['embeddings', 'rerank'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/**
 * The ONNX weights a pull can take, by the file the Hub's transformers.js exports name them. The
 * chosen one is stored as onnx/model.onnx: that is the file docindex's onnx adapters load (they
 * ask transformers.js for dtype fp32), whatever the weights inside.
 */
export const VARIANT_FILES = {
  fp32: 'onnx/model.onnx',
  quantized: 'onnx/model_quantized.onnx',
} as const;
export type ModelVariant = keyof typeof VARIANT_FILES;
export const MODEL_VARIANTS = Object.keys(VARIANT_FILES) as ModelVariant[];
/** What the onnx adapters load: transformers.js with dtype fp32 reads onnx/model.onnx. */
export const DEFAULT_VARIANT: ModelVariant = 'fp32';
export const LOADED_ONNX_FILE = 'onnx/model.onnx';

export interface ManifestFile {
  /** Where the file is in the model folder. */
  path: string;
  /** Where it is in the Hub's repository (differs for the quantized weights). */
  source: string;
  size: number;
  sha256: string;
}

export interface ModelManifest {
  format: 1;
  repo: string;
  /** As asked for (`main`, a tag, a commit). */
  revision: string;
  /** The commit the revision resolved to when pulled. */
  commit: string;
  kind: ModelKind;
  variant: ModelVariant;
  /** The Hub it came from (HF_ENDPOINT). */
  endpoint: string;
  pulled_at: string;
  files: ManifestFile[];
}

/** A model folder in MODELS_DIR, as `models list` shows it. */
export interface PulledModel {
  manifest: ModelManifest;
  path: string;
  /** Bytes of its files. */
  size: number;
}

/** A pull that stopped before its model was complete (`.partial/<name>/pull.json`). */
export interface InterruptedPull {
  repo: string;
  revision: string;
  variant: ModelVariant;
  /** Bytes on disk so far. */
  size: number;
}

/** `owner/name` (or a bare `name`): letters, digits, `.`, `_` and `-`, as Hub repository ids. */
const REPO = /^(?:[A-Za-z0-9][A-Za-z0-9._-]*\/)?[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function isRepoId(repo: string): boolean {
  return REPO.test(repo) && !repo.split('/').some((part) => part.includes('..'));
}

/**
 * The model's folder relative to MODELS_DIR: the repository id, with `-quantized` for the
 * quantized weights and `@revision` for a revision other than main. The folder's last part is the
 * model's name in a vector's profile, so another variant or revision is another profile.
 */
export function folderOf(repo: string, revision: string, variant: ModelVariant): string {
  let folder = repo;
  if (variant !== 'fp32') folder += `-${variant}`;
  if (revision !== 'main') folder += `@${revision.replace(/[^A-Za-z0-9._-]/g, '_')}`;
  return folder;
}

/** `.partial/<folder with / as -->`: the pull's working folder, on the same file system as the model. */
export function partialFolderOf(modelsDir: string, folder: string): string {
  return path.join(modelsDir, PARTIAL_DIR, folder.replaceAll('/', '--'));
}

/** The manifest in `dir`; null when there is none (or it is not ours). */
export async function readManifest(dir: string): Promise<ModelManifest | null> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    // ENOTDIR: a file stands where a folder of the path should; no manifest there either.
    if (isMissing(error) || codeOf(error) === 'ENOTDIR') return null;
    throw new ModelPullError('disk', `cannot read ${path.join(dir, MANIFEST_FILE)} (${codeOf(error)})`);
  }
  try {
    const manifest = JSON.parse(text) as ModelManifest;
    return manifest.format === 1 && Array.isArray(manifest.files) ? manifest : null;
  } catch {
    return null;
  }
}

/** Every model folder under `modelsDir` (one or two levels down), sorted by repository. */
export async function listModels(modelsDir: string): Promise<PulledModel[]> {
  const found: PulledModel[] = [];
  for (const top of await folders(modelsDir)) {
    if (top.startsWith('.')) continue;
    const topDir = path.join(modelsDir, top);
    const manifest = await readManifest(topDir);
    if (manifest) {
      found.push({ manifest, path: topDir, size: sizeOf(manifest) });
      continue;
    }
    for (const inner of await folders(topDir)) {
      const dir = path.join(topDir, inner);
      const innerManifest = await readManifest(dir);
      if (innerManifest) found.push({ manifest: innerManifest, path: dir, size: sizeOf(innerManifest) });
    }
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

/** Pulls that stopped before their model was complete. */
export async function listInterrupted(modelsDir: string): Promise<InterruptedPull[]> {
  const root = path.join(modelsDir, PARTIAL_DIR);
  const found: InterruptedPull[] = [];
  for (const name of await folders(root)) {
    const dir = path.join(root, name);
    try {
      const pull = JSON.parse(await readFile(path.join(dir, PULL_FILE), 'utf8')) as InterruptedPull;
      found.push({
        repo: pull.repo,
        revision: pull.revision,
        variant: pull.variant,
        size: await bytesIn(dir),
      });
    } catch {
      // Not a pull's folder, or one that never got as far as its first file.
    }
  }
  return found;
}

/** The partial folder's record of what it is being filled with. */
export const PULL_FILE = 'pull.json';

function sizeOf(manifest: ModelManifest): number {
  return manifest.files.reduce((sum, file) => sum + file.size, 0);
}

/**
 * Why the folder no longer holds what its manifest lists (a file missing, of another size or
 * hash); null when every file is as pulled.
 */
export async function checkFolder(dir: string, manifest: ModelManifest): Promise<string | null> {
  for (const file of manifest.files) {
    const full = path.join(dir, file.path);
    let size: number;
    try {
      size = (await stat(full)).size;
    } catch {
      return `${file.path} is missing`;
    }
    if (size !== file.size) return `${file.path} has ${size} bytes, not ${file.size}`;
    const sha256 = await sha256Of(full).catch(() => null);
    if (sha256 === null) return `${file.path} cannot be read`;
    if (sha256 !== file.sha256) return `${file.path} has changed`;
  }
  return null;
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function folders(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if (isMissing(error)) return [];
    throw new ModelPullError('disk', `cannot read ${dir} (${codeOf(error)})`);
  }
}

async function bytesIn(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

export function isMissing(error: unknown): boolean {
  return codeOf(error) === 'ENOENT';
}

function codeOf(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'EIO';
}
