// Claims of the documentation that are lists kept by hand beside the code that decides them: each
// fails here when the code and the page part ways.
import { describe, expect, it } from 'vitest';
import { ADVERTISED_EXTENSIONS } from '../../src/domain/formats.js';
import { readDoc } from './markdown.js';

describe('claims of the documentation', () => {
  it('the command line table lists the folder formats `docindex ingest` takes, in one row', () => {
    const rows = readDoc('docs/CLIENTS.md')
      .split('\n')
      .filter((line) => line.startsWith('| `docindex ingest <files'));
    expect(rows).toHaveLength(1);
    const listed = /folders are searched for ([^;]+);/.exec(rows[0]!)?.[1]?.split(' ');
    expect(listed).toEqual([...ADVERTISED_EXTENSIONS]);
  });
});
