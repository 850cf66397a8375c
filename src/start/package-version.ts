// The version in package.json, read once when the process starts: the OpenAPI document and the
// docs page show it, so a release changes one file.
import { existsSync, readFileSync } from 'node:fs';

// package.json sits at the repository root: two levels above this file in src/, three in dist/src/.
function readPackageVersion(): string {
  for (const relative of ['../../package.json', '../../../package.json']) {
    const file = new URL(relative, import.meta.url);
    if (!existsSync(file)) continue;
    const { name, version } = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
    if (name === 'docindex' && typeof version === 'string') return version;
  }
  throw new Error('package.json of docindex not found beside src/: cannot tell the version');
}

export const PACKAGE_VERSION = readPackageVersion();
