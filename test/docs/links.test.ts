// Every link of the documentation that stays in this repository leads somewhere: the file exists,
// and an anchor (`page.md#section`, `#section`) names a heading of that page. Pages move and
// headings change; a link left behind fails here rather than in a reader's browser.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, documentationFiles, localLinks, ROOT, readDoc, slug } from './markdown.js';

describe('documentation links', () => {
  it('makes anchors the way GitHub does', () => {
    expect(slug('The `docindex` command')).toBe('the-docindex-command');
    expect(slug('Keyword search on PostgreSQL: RUM or GIN')).toBe('keyword-search-on-postgresql-rum-or-gin');
    expect(slug('OCR: scanned PDFs and images')).toBe('ocr-scanned-pdfs-and-images');
    expect([...anchors('# A\n\n```sh\n# not a heading\n```\n\n## A\n')]).toEqual(['a', 'a-1']);
  });

  for (const file of documentationFiles()) {
    it(`${file}: every local link and anchor resolves`, () => {
      const broken: string[] = [];
      for (const link of localLinks(readDoc(file))) {
        const [target = '', anchor] = link.target.split('#');
        const resolved = target === '' ? file : path.posix.join(path.posix.dirname(file), target);
        if (!existsSync(path.join(ROOT, resolved))) {
          broken.push(`${file}:${link.line}: ${link.target} (no file ${resolved})`);
        } else if (anchor !== undefined && !anchors(readDoc(resolved)).has(anchor)) {
          broken.push(`${file}:${link.line}: ${link.target} (no heading #${anchor} in ${resolved})`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
