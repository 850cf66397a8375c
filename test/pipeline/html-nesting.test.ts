// Markup nesting is bounded before linkedom builds a DOM (src/pipeline/formats/html/nesting.ts):
// its parser pays the current depth for every tag, so 200,000 nested <div>s (2.2 MB) took over a
// minute of a pipeline thread. Past 512 open elements, as in browsers, tags stop nesting and
// their text stays. Checked on the DOM linkedom builds from the bounded markup (its depth, its
// text), on pages that must come through untouched, and through the extractor.
import { parseHTML } from 'linkedom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineThreads, type PipelineThreads } from '../../src/pipeline/extract/index.js';
import { extractHtmlText, markupText } from '../../src/pipeline/formats/html/extract.js';
import { limitNesting, MAX_MARKUP_DEPTH } from '../../src/pipeline/formats/html/nesting.js';
import { makeTempDir, type TempDir } from './extract-support.js';

interface Node {
  nodeType: number;
  childNodes: ArrayLike<Node>;
}

/** Elements on the longest path from the document down, as linkedom builds it. */
function domDepth(html: string): number {
  const { document } = parseHTML(html) as unknown as { document: Node };
  let deepest = 0;
  const stack: [Node, number][] = [[document, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    const children = node.childNodes;
    for (let i = 0; i < children.length; i++) {
      if (children[i]!.nodeType === 1) stack.push([children[i]!, depth + 1]);
    }
  }
  return deepest;
}

describe('limitNesting', () => {
  it('stops nesting at 512 open elements and keeps every word', () => {
    const levels = 5_000;
    const words = Array.from({ length: levels }, (_, i) => `w${i}`);
    const html = `<html><body>${words.map((w) => `<div>${w}`).join('')}${'</div>'.repeat(levels)}</body></html>`;
    const bounded = limitNesting(html);
    expect(domDepth(bounded)).toBeLessThanOrEqual(MAX_MARKUP_DEPTH + 1);
    const text = markupText(html);
    expect(text.split(/\s+/)).toEqual(words);
  });

  it('is not fooled by closing tags of elements that are not open, or by <div/>', () => {
    for (const html of [
      `<body>${'<div></span></x-y>'.repeat(3_000)}text</body>`,
      `<body>${'<div/>'.repeat(3_000)}text</body>`,
      `<body><svg><foreignObject>${'<div/>'.repeat(3_000)}</foreignObject></svg>text</body>`,
    ]) {
      expect(domDepth(limitNesting(html))).toBeLessThanOrEqual(MAX_MARKUP_DEPTH + 1);
    }
  });

  it('leaves alone pages whose elements close, even implicitly, however many there are', () => {
    for (const html of [
      `<body>${'<p>a paragraph'.repeat(10_000)}</body>`,
      `<ul>${'<li>item'.repeat(5_000)}</ul>`,
      `<table>${'<tr><td>a<td>b'.repeat(3_000)}</table>`,
      `<body>${'<img src=x><br><input>'.repeat(2_000)}</body>`,
      `<svg>${'<path d="M0 0"/>'.repeat(3_000)}</svg>`,
      `<body>${'<section><p>text</p></section>'.repeat(3_000)}</body>`,
      `<script>${'<div>'.repeat(3_000)}</script><p>text</p>`,
      `<body>${'<div>'.repeat(MAX_MARKUP_DEPTH - 1)}deep${'</div>'.repeat(MAX_MARKUP_DEPTH - 1)}</body>`,
    ]) {
      expect(limitNesting(html)).toBe(html);
    }
  });

  it('takes out a dropped element’s closing tag with it, so outer elements close where they did', () => {
    const html = `${'<div>'.repeat(MAX_MARKUP_DEPTH)}<b class="x">bold</b > after${'</div>'.repeat(MAX_MARKUP_DEPTH)}<p>outside</p>`;
    const bounded = limitNesting(html);
    expect(bounded).toBe(html.replace('<b class="x">', '').replace('</b >', ''));
    expect(extractHtmlText(Buffer.from(bounded)).endsWith('bold after\n\noutside')).toBe(true);
  });
});

describe('a page of 200,000 nested <div>s (2.2 MB) through the extractor', () => {
  let extractor: PipelineThreads;
  let tmp: TempDir;
  beforeAll(async () => {
    // The document timeout the page must finish within; before nesting was bounded its
    // extraction took well over a minute, so this fails with `timeout` there.
    extractor = createPipelineThreads({
      maxWorkers: 1,
      timeoutMs: 30_000,
      maxHeapMb: 512,
      pdfMaxPages: 5_000,
    });
    tmp = await makeTempDir();
  });
  afterAll(async () => {
    await extractor.close();
    await tmp.remove();
  });

  it('is read, its text whole', async () => {
    const depth = 200_000;
    const page = `<html><body>${'<div>'.repeat(depth)}deep text${'</div>'.repeat(depth)}</body></html>`;
    expect(page.length).toBeGreaterThan(2_200_000);
    const file = await tmp.write('deep.html', page);
    const result = await extractor.extract(file, 'html');
    expect(result.text).toBe('deep text');
  }, 60_000);
});
