// Reading a sitemap file: unpacked when gzipped, then the `<loc>` of each entry, and whether it
// is a sitemap index (its entries are further sitemaps) or a sitemap (its entries are pages).
import { gunzipSync } from 'node:zlib';
import { SaxesParser } from 'saxes';
import { FetchError } from '../../../pipeline/fetch/index.js';

/** The sitemap protocol's own limit on one (decompressed) sitemap file. */
export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

/** The entries of a downloaded sitemap, gzipped (told by its magic number) or not. */
export function readSitemap(body: Buffer): { index: boolean; locs: string[] } {
  return parseSitemap(body[0] === 0x1f && body[1] === 0x8b ? gunzip(body) : body);
}

function gunzip(bytes: Buffer): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: MAX_SITEMAP_BYTES });
  } catch {
    throw new FetchError('url_unreachable', 'the sitemap is not valid gzip (or over 50 MB unpacked)', false);
  }
}

/** `<loc>` of each `<url>` (a sitemap) or `<sitemap>` (a sitemap index). */
function parseSitemap(bytes: Buffer): { index: boolean; locs: string[] } {
  const parser = new SaxesParser({ xmlns: false });
  const locs: string[] = [];
  let index = false;
  let inLoc = false;
  let text = '';
  let first = true;
  parser.on('opentag', (tag) => {
    const name = tag.name.replace(/^.*:/, '');
    if (first) {
      index = name === 'sitemapindex';
      first = false;
    }
    if (name === 'loc') {
      inLoc = true;
      text = '';
    }
  });
  parser.on('text', (t) => {
    if (inLoc) text += t;
  });
  parser.on('cdata', (t) => {
    if (inLoc) text += t;
  });
  parser.on('closetag', (tag) => {
    if (tag.name.replace(/^.*:/, '') === 'loc') {
      inLoc = false;
      if (text.trim() !== '') locs.push(text.trim());
    }
  });
  try {
    parser.write(bytes.toString('utf8')).close();
  } catch {
    throw new FetchError('url_unreachable', 'the sitemap is not well-formed XML', false);
  }
  return { index, locs };
}
