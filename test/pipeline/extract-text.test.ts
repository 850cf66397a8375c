// Plain text, Markdown and web pages through the extractor: encodings, NUL bytes and damaged
// bytes handled without a crash; a page's main text with its title first, and nothing on the
// page run or fetched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineThreads, type PipelineThreads } from '../../src/pipeline/extract/index.js';
import { makeTempDir, positionsInOrder, startCanary, type TempDir } from './extract-support.js';

let extractor: PipelineThreads;
let tmp: TempDir;
beforeAll(async () => {
  extractor = createPipelineThreads({ maxWorkers: 2, timeoutMs: 30_000, maxHeapMb: 512, pdfMaxPages: 5_000 });
  tmp = await makeTempDir();
});
afterAll(async () => {
  await extractor.close();
  await tmp.remove();
});

let counter = 0;
async function extract(data: Buffer | string, format: 'txt' | 'md' | 'html') {
  const file = await tmp.write(`input-${counter++}.${format}`, data);
  return extractor.extract(file, format);
}

describe('plain text', () => {
  it('UTF-8 with its BOM stripped', async () => {
    const result = await extract(`\ufeffGrüße aus Köln ✓`, 'txt');
    expect(result).toEqual({
      text: 'Grüße aus Köln ✓',
      pages: null,
      format: 'txt',
      contentType: 'text/plain',
      ocrPages: null,
    });
  });

  it('UTF-16 LE and BE with a BOM', async () => {
    const text = 'naïve café — 日本語';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    expect((await extract(le, 'txt')).text).toBe(text);
    expect((await extract(be, 'txt')).text).toBe(text);
  });

  it('NUL bytes removed, CRLF and CR line ends made \\n', async () => {
    expect((await extract('one\u0000two\r\nthree\rfour\n', 'txt')).text).toBe('onetwo\nthree\nfour\n');
  });

  it('invalid UTF-8 sequences become U+FFFD, the rest survives', async () => {
    const bytes = Buffer.concat([
      Buffer.from('good '),
      Buffer.from([0xc3, 0x28, 0xff, 0xed, 0xa0, 0x80]),
      Buffer.from(' end é'),
    ]);
    const text = (await extract(bytes, 'txt')).text;
    expect(text.startsWith('good \ufffd(')).toBe(true);
    expect(text.endsWith(' end é')).toBe(true);
    expect(text).not.toContain('\u0000');
  });

  it('an unpaired surrogate in UTF-16 becomes U+FFFD', async () => {
    const units = Buffer.from([0xff, 0xfe, 0x61, 0x00, 0x00, 0xd8, 0x62, 0x00]); // "a", lone high surrogate, "b"
    expect((await extract(units, 'txt')).text).toBe('a\ufffdb');
  });

  it('an empty file is empty text, not an error', async () => {
    expect((await extract('', 'txt')).text).toBe('');
  });
});

describe('Markdown', () => {
  it('is kept as written: headings, lists and code fences are what the chunker splits on', async () => {
    const md =
      '# Title\n\nIntro paragraph.\n\n## Section\n\n- item one\n- item two\n\n```ts\nconst x = 1;\n```\n';
    expect(await extract(md, 'md')).toEqual({
      text: md,
      pages: null,
      format: 'md',
      contentType: 'text/markdown',
      ocrPages: null,
    });
  });
});

describe('HTML pages', () => {
  const article = (extraHead = '', extraBody = '') => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Rivers of Europe</title>${extraHead}</head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/login">Log in</a></nav>
<main><article>
<h1>Rivers of Europe</h1>
<p>The Danube flows through ten countries, more than any other river in the world, from the Black Forest to the Black Sea. Its basin drains a fifth of the continent.</p>
<p>The Rhine rises in the Swiss Alps and reaches the North Sea in the Netherlands, carrying more freight than any other European waterway for most of its length.</p>
<h2>Longest rivers</h2>
<ul><li>Volga</li><li>Danube</li><li>Ural</li></ul>
<table><tr><th>River</th><th>Length</th></tr><tr><td>Volga</td><td>3,530 km</td></tr></table>
<p>The Loire is the longest river entirely within France, and its valley is known for the castles built along its banks during the Renaissance.</p>
${extraBody}
</article></main>
<footer>Copyright 2024 Example Publishing. All rights reserved. Cookie settings.</footer>
</body></html>`;

  it('main text with the title as the first line, blocks as paragraphs, no navigation or footer', async () => {
    const result = await extract(article(), 'html');
    expect(result.format).toBe('html');
    expect(result.contentType).toBe('text/html');
    expect(result.text.startsWith('Rivers of Europe\n\n')).toBe(true);
    expect(
      positionsInOrder(result.text, [
        'Rivers of Europe',
        'The Danube flows through ten countries',
        'The Rhine rises in the Swiss Alps',
        'Longest rivers',
        'Volga',
        'Danube',
        'Ural',
        'The Loire is the longest river',
      ]),
    ).not.toContain(-1);
    // One list item per line (Readability wraps each item in its own paragraph).
    expect(result.text).toMatch(/\nVolga\n+Danube\n+Ural\n/);
    // Tables as Markdown tables.
    expect(result.text).toContain('| River | Length |\n| --- | --- |\n| Volga | 3,530 km |');
    expect(result.text).not.toContain('Log in');
    expect(result.text).not.toContain('Cookie settings');
  });

  it('runs no script and fetches nothing the page references', async () => {
    const canary = await startCanary();
    try {
      const head = `<link rel="stylesheet" href="${canary.url}/style.css"><script src="${canary.url}/app.js"></script>
<script>fetch('${canary.url}/inline'); document.title = 'changed by script';</script>`;
      const body = `<img src="${canary.url}/photo.jpg" alt=""><iframe src="${canary.url}/frame"></iframe>
<video src="${canary.url}/clip.mp4"></video><object data="${canary.url}/obj"></object>
<img src="x" onerror="fetch('${canary.url}/onerror')">`;
      const result = await extract(article(head, body), 'html');
      expect(result.text.startsWith('Rivers of Europe')).toBe(true);
      expect(result.text).not.toContain('changed by script');
      expect(result.text).not.toContain('fetch(');
      // Give any stray request time to arrive before counting.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(canary.connections()).toBe(0);
    } finally {
      await canary.close();
    }
  });

  it('falls back to the body text when Readability finds no article', async () => {
    const result = await extract(
      '<html><head><title>Short</title></head><body><p>Just one line.</p></body></html>',
      'html',
    );
    expect(result.text).toBe('Short\n\nJust one line.');
  });

  it('a bare fragment without <html> or <body> still gives its text', async () => {
    expect((await extract('Hello <b>bold</b> world<p>Second</p>', 'html')).text).toBe(
      'Hello bold world\n\nSecond',
    );
  });

  it('decodes the charset a <meta> declares (windows-1252)', async () => {
    const html =
      '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e \x80 5 \x93quoted\x94</p></body></html>';
    expect((await extract(Buffer.from(html, 'latin1'), 'html')).text).toBe(
      'Café\n\nCrème brûlée € 5 “quoted”',
    );
  });

  it('pages nested 20,000 levels deep are read (Readability is skipped), not a time-out', async () => {
    const deep = `<html><body>${'<div>'.repeat(20_000)}deep text${'</div>'.repeat(20_000)}</body></html>`;
    const started = Date.now();
    expect((await extract(deep, 'html')).text).toBe('deep text');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('an empty page is empty text', async () => {
    expect((await extract('<html><body></body></html>', 'html')).text).toBe('');
  });
});
