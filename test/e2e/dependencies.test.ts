// Every package the lock file installs must run on the Node we run on, and every package the
// service needs in production must run on the oldest Node the README and package.json promise.
// A dependency that drifts to a release for a newer Node (npm only warns, EBADENGINE) fails here,
// before a user on Node 20 meets it at run time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../pipeline/extract-support.js';

interface LockedPackage {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

function nodeRange(pkg: LockedPackage): string | null {
  const engines = pkg.engines;
  if (!engines || Array.isArray(engines)) return null;
  return engines.node ?? null;
}

/** "name@version needs <range>" for each locked package (production only if asked) refusing `version`. */
function refusing(version: string, productionOnly: boolean): string[] {
  const refused: string[] = [];
  for (const [where, pkg] of Object.entries(lock.packages)) {
    if (where === '' || (productionOnly && pkg.dev)) continue;
    const range = nodeRange(pkg);
    if (range !== null && !semver.satisfies(version, range)) {
      refused.push(`${where.replace(/^.*node_modules\//, '')}@${pkg.version} needs node ${range}`);
    }
  }
  return refused;
}

describe('dependencies', () => {
  it('all install on the Node the tests run on', () => {
    expect(refusing(process.version, false)).toEqual([]);
  });

  it('the production ones run on the oldest Node package.json promises', () => {
    const oldest = semver.minVersion(manifest.engines.node);
    expect(oldest?.major).toBe(20);
    expect(refusing(oldest!.version, true)).toEqual([]);
  });

  it('the lock file records engines, so the checks above have something to check', () => {
    const withEngines = Object.values(lock.packages).filter((pkg) => nodeRange(pkg) !== null);
    expect(withEngines.length).toBeGreaterThan(50);
  });
});
