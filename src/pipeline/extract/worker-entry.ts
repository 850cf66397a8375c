// Where the pool finds the script of its threads and processes. Built with tsc, it is worker.js
// beside this module (dist/src/pipeline/extract/). Run from the TypeScript sources (vitest), there
// is no .js to start and Node 20 cannot run .ts, so the thread or process starts from a tiny
// bootstrap that registers a loader hook compiling .ts with esbuild (vitest's own compiler) and
// then imports worker.ts. The hook exists only there and only when the sources are .ts.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export function workerEntry(): URL {
  const self = new URL(import.meta.url);
  if (!self.pathname.endsWith('.ts')) return new URL('./worker.js', self);
  return new URL(`data:text/javascript,${encodeURIComponent(workerBootstrap())}`);
}

/** The bootstrap module's source, when running from the .ts sources. */
export function workerBootstrap(): string {
  return bootstrapSource(new URL('./worker.ts', import.meta.url));
}

function bootstrapSource(workerTs: URL): string {
  let esbuild: string;
  try {
    esbuild = pathToFileURL(createRequire(import.meta.url).resolve('esbuild')).href;
  } catch {
    throw new Error(
      'running the extractor from .ts sources needs esbuild (it comes with vitest); build with tsc instead',
    );
  }
  const hooks = `
import { access, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import esbuild from ${JSON.stringify(esbuild)};
export async function resolve(specifier, context, next) {
  // NodeNext sources import './x.js' for a file that is really './x.ts'.
  if (context.parentURL?.endsWith('.ts') && /^\\.\\.?\\//.test(specifier) && specifier.endsWith('.js')) {
    const ts = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    try {
      await access(ts);
      return { url: ts.href, shortCircuit: true };
    } catch {}
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const { code } = await esbuild.transform(source, {
    loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: fileURLToPath(url),
  });
  return { format: 'module', source: code, shortCircuit: true };
}`;
  const hooksUrl = `data:text/javascript,${encodeURIComponent(hooks)}`;
  return `import { register } from 'node:module';
register(${JSON.stringify(hooksUrl)});
await import(${JSON.stringify(workerTs.href)});`;
}
