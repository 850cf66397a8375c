// Claims of the documentation that are lists kept by hand beside the code that decides them: each
// fails here when the code and the page part ways.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADVERTISED_EXTENSIONS } from '../../src/domain/formats.js';
import { FAILURE_CODES } from '../../src/domain/types.js';
import { ROOT, readDoc } from './markdown.js';

describe('claims of the documentation', () => {
  it('the command line table lists the folder formats `docindex ingest` takes, in one row', () => {
    const rows = readDoc('docs/CLIENTS.md')
      .split('\n')
      .filter((line) => line.startsWith('| `docindex ingest <files'));
    expect(rows).toHaveLength(1);
    const listed = /folders are searched for ([^;]+);/.exec(rows[0]!)?.[1]?.split(' ');
    expect(listed).toEqual([...ADVERTISED_EXTENSIONS]);
  });

  it("the API page lists exactly the codes a document can fail with, in the code's order", () => {
    const sentence = /ends `failed` with one of these codes: ([\s\S]*?)\. A ZIP-based/.exec(
      readDoc('docs/API.md'),
    )?.[1];
    const listed = [...(sentence ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual([...FAILURE_CODES]);
  });

  it('the architecture page names every file of the domain layer', () => {
    const page = readDoc('docs/ARCHITECTURE.md');
    const files = readdirSync(path.join(ROOT, 'src/domain')).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(30);
    expect(files.filter((name) => !new RegExp(`\\b${name.replace('.', '\\.')}\\b`).test(page))).toEqual([]);
  });

  it("the architecture page's picture names files that exist", () => {
    const page = readDoc('docs/ARCHITECTURE.md');
    const picture = /## The picture\n[\s\S]*?```text\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
    const named = [...picture.matchAll(/[a-z0-9|/<>-]+\.ts\b/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(30);
    const missing = named
      .flatMap((name) => {
        // "sqlite|postgres/x.ts" names both adapters; "<id>" any format folder, checked for pdf.
        const [head = '', ...rest] = name.split('/');
        const tail = rest.join('/').replace('<id>', 'pdf');
        return head.includes('|')
          ? head.split('|').map((h) => `${h}/${tail}`)
          : [[head, tail].filter(Boolean).join('/')];
      })
      .filter((file) => !['src', 'src/adapters'].some((dir) => existsSync(path.join(ROOT, dir, file))));
    expect(missing).toEqual([]);
  });
});
