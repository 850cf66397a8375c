import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { judge, lockLicences } from '../../scripts/licences.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

describe('licence', () => {
  it('is Apache-2.0 in the LICENSE file, package.json, the lock file and the Python client', () => {
    expect(read('LICENSE')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(read('LICENSE')).toContain('END OF TERMS AND CONDITIONS');
    expect(JSON.parse(read('package.json')).license).toBe('Apache-2.0');
    expect(JSON.parse(read('package-lock.json')).packages[''].license).toBe('Apache-2.0');
    expect(read('clients/python/pyproject.toml')).toMatch(/^license = \{text = "Apache-2\.0"\}$/m);
  });

  it('reads SPDX expressions: OR takes the best branch, AND the worst', () => {
    expect(judge('MIT')).toBe('permissive');
    expect(judge('(MIT OR GPL-3.0-or-later)')).toBe('permissive');
    expect(judge('GPL-3.0-only')).toBe('refused');
    expect(judge('AGPL-3.0-or-later')).toBe('refused');
    expect(judge('SSPL-1.0')).toBe('refused');
    expect(judge('Apache-2.0 AND LGPL-3.0-or-later')).toBe('weak-copyleft');
    expect(judge('MIT AND GPL-2.0-only')).toBe('refused');
    expect(judge('(MIT OR EUPL-1.1+)')).toBe('permissive');
    expect(judge('MIT OR Apache')).toBe('permissive');
    expect(judge('UNLICENSED')).toBe('refused');
    expect(judge('(MIT')).toBe('refused');
    expect(judge('')).toBe('refused');
  });

  it('allows every package the lock file can install', () => {
    const all = lockLicences(path.join(ROOT, 'package-lock.json'));
    expect(all.length).toBeGreaterThan(100);
    const refused = all.filter((p) => p.verdict === 'refused');
    expect(refused.map((p) => `${p.name}@${p.version}: ${p.licence ?? 'no licence field'}`)).toEqual([]);
    // Weak copyleft only for sharp's prebuilt libvips, a shared library loaded at run time.
    const weak = all.filter((p) => p.verdict === 'weak-copyleft');
    for (const p of weak) expect(p.name).toMatch(/^@img\/sharp-/);
  });
});
