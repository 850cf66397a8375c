// `docindex models pull` and `docindex models list`: transformers.js models from the Hugging Face
// Hub (HF_ENDPOINT, HF_TOKEN) into MODELS_DIR, for EMBEDDINGS=onnx and RERANK=onnx to load. The
// server never downloads; this command is the one way a model arrives. Progress and notes go to
// stderr, the model's folder (or, with --json, one JSON line) to stdout.
import { parseArguments, UsageError } from './args.js';
import {
  isRepoId,
  listInterrupted,
  listModels,
  MODEL_KINDS,
  MODEL_VARIANTS,
  type ModelManifest,
} from './models/model-folder.js';
import type { PullEvent } from './models/pull.js';
import { ProgressLine, renderTable, type TerminalIO } from './render.js';

export const MODELS_USAGE = `Models (from the Hugging Face Hub into MODELS_DIR; the server itself never downloads):
  docindex models pull REPO[@REVISION] [--kind ${MODEL_KINDS.join('|')}] [--variant ${MODEL_VARIANTS.join('|')}] [--json]
                                   download a transformers.js model (resumes an interrupted pull)
  docindex models list [--json]    the models pulled so far`;

/** What the models commands read from the configuration. */
export interface ModelSettings {
  /** MODELS_DIR, absolute. */
  modelsDir: string;
  /** HF_ENDPOINT. */
  hubEndpoint: string;
  /** HF_TOKEN; '' for none. */
  hubToken: string;
}

export async function runModelsCommand(
  args: string[],
  settings: () => ModelSettings,
  io: TerminalIO,
): Promise<number> {
  const [action, ...rest] = args;
  if (action === 'pull') return pull(rest, settings, io);
  if (action === 'list' || action === 'ls') return list(rest, settings, io);
  throw new UsageError(action ? `unknown command models ${action}` : 'models needs pull or list');
}

async function pull(args: string[], settings: () => ModelSettings, io: TerminalIO): Promise<number> {
  const { values, positionals } = parseArguments(
    args,
    { kind: { type: 'string' }, variant: { type: 'string' }, json: { type: 'boolean' } },
    1,
  );
  const [spec] = positionals as [string];
  const at = spec.indexOf('@');
  const repo = at < 0 ? spec : spec.slice(0, at);
  const revision = at < 0 ? 'main' : spec.slice(at + 1);
  if (!isRepoId(repo)) {
    throw new UsageError(
      `${JSON.stringify(repo)} is not a Hub repository id (owner/name, e.g. Xenova/bge-small-en-v1.5)`,
    );
  }
  if (revision === '' || /[\s\p{Cc}]/u.test(revision)) {
    throw new UsageError(`${JSON.stringify(revision)} is not a revision (a branch, tag or commit after @)`);
  }
  const kind = oneOf(values.kind, MODEL_KINDS, '--kind');
  const variant = oneOf(values.variant, MODEL_VARIANTS, '--variant');
  const { modelsDir, hubEndpoint, hubToken } = settings();

  // Loaded here: the other commands start without the HTTP client the downloads use.
  const { HubClient } = await import('./models/hub.js');
  const { pullModel } = await import('./models/pull.js');
  const hub = new HubClient(hubEndpoint, hubToken);
  const progress = new ProgressLine(io.stderr);
  const say = (line: string) => {
    progress.clear();
    io.stderr.write(`${line}\n`);
  };
  const onEvent = (event: PullEvent) => {
    switch (event.type) {
      case 'plan':
        say(
          `${repo}@${revision}: commit ${event.commit.slice(0, 12)}, ${event.files} files, ${bytes(event.bytes)} → ${event.folder}`,
        );
        break;
      case 'resume':
        say(`  ${event.file}: resuming at ${bytes(event.offset)}`);
        break;
      case 'restart':
        say(`  ${event.file}: starting over (${event.reason})`);
        break;
      case 'progress':
        progress.update(
          `  ${event.file}  ${bytes(event.received)}${event.total === null ? '' : ` / ${bytes(event.total)}  ${Math.floor((event.received / Math.max(1, event.total)) * 100)}%`}`,
        );
        break;
      case 'file':
        say(`  ${event.file}  ${bytes(event.size)}${event.reused ? ' (already downloaded)' : ''}`);
        break;
      case 'warning':
        say(`warning: ${event.text}`);
        break;
    }
  };
  try {
    const result = await pullModel(hub, modelsDir, { repo, revision, kind, variant }, onEvent);
    progress.clear();
    const env = envFor(result.manifest, result.path);
    const envLine = Object.entries(env)
      .map(([name, value]) => `${name}=${shellWord(value)}`)
      .join(' ');
    io.stderr.write(
      `${
        result.downloaded
          ? `pulled ${repo}@${revision} into ${result.path}`
          : `${repo}@${revision} is already in ${result.path} (commit ${result.manifest.commit.slice(0, 12)}, every file intact): nothing downloaded`
      }\n`,
    );
    if (result.replacedCommit !== null) {
      const reembed =
        result.manifest.kind === 'embeddings'
          ? '; then `docindex reindex --vectors` re-embeds the documents with it'
          : '';
      io.stderr.write(
        `it replaced commit ${result.replacedCommit.slice(0, 12)}: a server using this folder loads the new model when it restarts${reembed}\n`,
      );
    }
    io.stderr.write(`use it with:\n  ${envLine}\n`);
    if (values.json) {
      io.stdout.write(
        `${JSON.stringify({ ...describe(result.manifest, result.path), downloaded: result.downloaded, env })}\n`,
      );
    } else {
      io.stdout.write(`${result.path}\n`);
    }
    return 0;
  } finally {
    progress.clear();
    await hub.close();
  }
}

async function list(args: string[], settings: () => ModelSettings, io: TerminalIO): Promise<number> {
  const { values } = parseArguments(args, { json: { type: 'boolean' } }, 0);
  const { modelsDir } = settings();
  const models = await listModels(modelsDir);
  const interrupted = await listInterrupted(modelsDir);
  if (values.json) {
    io.stdout.write(
      `${JSON.stringify({
        models_dir: modelsDir,
        models: models.map((model) => describe(model.manifest, model.path)),
        interrupted,
      })}\n`,
    );
    return 0;
  }
  if (models.length === 0) {
    io.stdout.write(`no models in ${modelsDir} (docindex models pull REPO downloads one)\n`);
  } else {
    const header = ['REPO', 'REVISION', 'COMMIT', 'KIND', 'VARIANT', 'SIZE', 'PATH'];
    const rows = models.map(({ manifest, path, size }) => [
      manifest.repo,
      manifest.revision,
      manifest.commit.slice(0, 12),
      manifest.kind,
      manifest.variant,
      bytes(size),
      path,
    ]);
    io.stdout.write(renderTable([header, ...rows]));
  }
  for (const pull of interrupted) {
    io.stderr.write(
      `interrupted: ${pull.repo}@${pull.revision} (${pull.variant}, ${bytes(pull.size)} so far): docindex models pull ${pull.repo}${pull.revision === 'main' ? '' : `@${pull.revision}`}${pull.variant === 'fp32' ? '' : ` --variant ${pull.variant}`} resumes it\n`,
    );
  }
  return 0;
}

/** The variables that point docindex's onnx adapter of the model's kind at its folder. */
function envFor(manifest: ModelManifest, folder: string): Record<string, string> {
  return manifest.kind === 'rerank'
    ? { RERANK: 'onnx', RERANK_MODEL_DIR: folder }
    : { EMBEDDINGS: 'onnx', EMBEDDINGS_MODEL_DIR: folder };
}

function describe(manifest: ModelManifest, folder: string) {
  return {
    repo: manifest.repo,
    revision: manifest.revision,
    commit: manifest.commit,
    kind: manifest.kind,
    variant: manifest.variant,
    size: manifest.files.reduce((sum, file) => sum + file.size, 0),
    path: folder,
    pulled_at: manifest.pulled_at,
  };
}

function oneOf<T extends string>(raw: string | undefined, allowed: readonly T[], flag: string): T | null {
  if (raw === undefined) return null;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(`${flag} takes ${allowed.join(' or ')}, got ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

/** A value as one word of a POSIX shell command line. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = count / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
