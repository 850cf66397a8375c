// The `web` source type: a crawl from start URLs and/or a sitemap. Items are pages and the
// documents they link to, keyed by their normalised URL (no fragment); the change token is the
// ETag, else Last-Modified, else a SHA-256 of the body, and a page seen before is asked for with
// If-None-Match / If-Modified-Since so an unchanged one costs a 304. Every request — robots.txt,
// sitemaps, pages, each redirect hop — goes through the URL-ingest fetcher (openUrl), so the
// address rules apply at every connection. robots.txt is obeyed (robots-parser), at most
// PER_HOST requests are in flight per host, and links are followed from HTML only.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser as HtmlParser } from 'htmlparser2';
import robotsParserModule from 'robots-parser';
import { ERRORS } from '../../../domain/errors.js';
import type { KnownItem, ListedItem, SourceConnection, SourceType } from '../../../domain/sources.js';
import { type AddressPolicy, FetchError, type FetchedBody, openUrl } from '../../../pipeline/fetch/index.js';
import { MAX_SITEMAP_BYTES, readSitemap } from './sitemap.js';

/** What the crawl asks of a parsed robots.txt. */
interface Robots {
  isAllowed(url: string, userAgent?: string): boolean | undefined;
}
// The package's own declaration does not describe its CommonJS export to NodeNext resolution.
const robotsParser = robotsParserModule as unknown as (url: string, text: string) => Robots;

export interface WebSourceConfig {
  start_urls: string[];
  sitemap?: string;
  include?: string[];
  exclude?: string[];
  max_pages: number;
  max_depth: number;
  same_host?: boolean;
}

export interface WebSourceOptions {
  policy: AddressPolicy;
  /** The largest page or document downloaded (the upload cap). */
  maxBytes: number;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  maxRedirects: number;
  /** Requests in flight at once, all hosts together (default 4). */
  concurrency?: number;
  /** Where fetched bodies wait for the run to ingest them (default the system's temporary folder). */
  spoolDir?: string;
}

/** The product token robots.txt groups are matched against. */
export const CRAWLER_TOKEN = 'docindex';
export const CRAWLER_USER_AGENT = `${CRAWLER_TOKEN}/1.0 (+https://docindex.dev/crawler)`;
/** Requests in flight per host: polite to small servers. */
const PER_HOST = 2;
/** Sitemaps of a sitemap index followed, and how deep indexes nest. */
const MAX_SITEMAPS = 100;
const MAX_SITEMAP_NESTING = 3;
const MAX_ROBOTS_BYTES = 512 * 1024;
/** A robots.txt answered with these means no rules: every 4xx but a timeout or "too many requests". */
const ROBOTS_NO_RULES = Array.from({ length: 100 }, (_, i) => 400 + i).filter((s) => s !== 408 && s !== 429);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/** A pattern of `include` / `exclude`: a glob over the whole URL, `*` standing for any characters. */
export function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

/** The URL as an item key: absolute http(s), without its fragment; null when it is not one. */
export function normaliseUrl(raw: string, base?: URL | string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '') return null;
  url.hash = '';
  return url.href;
}

export function webSourceType(options: WebSourceOptions): SourceType {
  return {
    name: 'web',
    prepare(raw) {
      const config = raw as unknown as WebSourceConfig;
      const urls: Array<{ url: string; pointer: string }> = [];
      for (const [i, start] of config.start_urls.entries()) {
        if (normaliseUrl(start) === null) {
          throw ERRORS.invalid(`config.start_urls[${i}] is not an http or https URL.`, [
            { pointer: `/config/start_urls/${i}`, message: 'an http or https URL without credentials' },
          ]);
        }
        urls.push({ url: start, pointer: `/config/start_urls/${i}` });
      }
      if (config.sitemap !== undefined) {
        if (normaliseUrl(config.sitemap) === null) {
          throw ERRORS.invalid('config.sitemap is not an http or https URL.', [
            { pointer: '/config/sitemap', message: 'an http or https URL without credentials' },
          ]);
        }
        urls.push({ url: config.sitemap, pointer: '/config/sitemap' });
      }
      if (urls.length === 0) {
        throw ERRORS.invalid('A web source needs start_urls, a sitemap, or both.', [
          { pointer: '/config/start_urls', message: 'at least one URL, or a sitemap' },
        ]);
      }
      return { config: { same_host: true, ...config }, credentials: null, urls };
    },
    connect(raw) {
      return new WebCrawl(raw as unknown as WebSourceConfig, options);
    },
  };
}

interface Fetched {
  /** Where the body waits; null for a 304. */
  file: string | null;
  filename: string;
}

/** A crawl, made for one run. */
class WebCrawl implements SourceConnection {
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];
  private readonly hosts: Set<string>;
  private readonly robots = new Map<string, Promise<Robots | null>>();
  private readonly inFlight = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();
  private readonly bodies = new Map<string, Fetched>();
  private spool: Promise<string> | null = null;

  constructor(
    private readonly config: WebSourceConfig,
    private readonly options: WebSourceOptions,
  ) {
    this.include = (config.include ?? []).map(globToRegExp);
    this.exclude = (config.exclude ?? []).map(globToRegExp);
    this.hosts = new Set(
      [...config.start_urls, ...(config.sitemap === undefined ? [] : [config.sitemap])].map(
        (u) => new URL(u).host,
      ),
    );
  }

  async *list(signal: AbortSignal, known: ReadonlyMap<string, KnownItem>): AsyncIterable<ListedItem> {
    const items: ListedItem[] = [];
    const seen = new Set<string>();
    const queue: Array<{ url: string; depth: number }> = [];
    // URLs taken towards max_pages: a URL robots.txt disallows gives its place back.
    let taken = 0;
    const admit = (raw: string, depth: number) => {
      const url = normaliseUrl(raw);
      if (url === null || seen.has(url) || taken >= this.config.max_pages || !this.wanted(url)) return;
      seen.add(url);
      taken += 1;
      queue.push({ url, depth });
    };
    for (const start of this.config.start_urls) admit(start, 0);
    if (this.config.sitemap !== undefined) {
      for (const url of await this.sitemapUrls(this.config.sitemap, signal)) admit(url, 0);
    }
    const seeds = queue.length;
    let seedsRead = 0;
    let firstSeedError: unknown = null;
    const follow = (links: readonly string[], depth: number) => {
      if (depth >= this.config.max_depth) return;
      for (const link of links) admit(link, depth + 1);
    };

    const crawlOne = async (entry: { url: string; depth: number; index: number }) => {
      const url = new URL(entry.url);
      if (!(await this.allowedByRobots(url, signal))) {
        taken -= 1;
        return;
      }
      const before = known.get(entry.url);
      const outcome = await this.withHostSlot(url.host, () => this.fetchItem(url, before ?? null, signal));
      if (outcome.kind === 'gone') {
        if (entry.index < seeds) seedsRead += 1;
        return;
      }
      if (outcome.kind === 'failed') {
        if (entry.index < seeds && firstSeedError === null) firstSeedError = outcome.error;
        // Kept as it was: its document stays, and the pages it linked to are still reached.
        items.push({ key: entry.url, etag: before?.etag ?? '', failure: failureOf(outcome.error) });
        if (before?.links) follow(before.links, entry.depth);
        return;
      }
      if (entry.index < seeds) seedsRead += 1;
      if (outcome.finalUrl !== entry.url) {
        // A redirect to a URL crawled under its own name is that item, not a second one.
        if (seen.has(outcome.finalUrl) && outcome.fetched.file !== null) {
          await rm(outcome.fetched.file, { force: true });
          return;
        }
        seen.add(outcome.finalUrl);
      }
      if (outcome.fetched.file !== null) this.bodies.set(entry.url, outcome.fetched);
      items.push({
        key: entry.url,
        etag: outcome.etag,
        links: outcome.links,
        filename: outcome.fetched.filename,
      });
      follow(outcome.links, entry.depth);
    };

    // A pool of workers over the growing queue, in the order URLs were found (breadth first).
    let next = 0;
    let busy = 0;
    let failure: unknown = null;
    const workers = Array.from({ length: this.options.concurrency ?? 4 }, async () => {
      for (;;) {
        if (failure !== null || signal.aborted) return;
        const entry = queue[next];
        if (entry === undefined) {
          // Others may still add links: wait until every worker is idle.
          if (busy === 0) return;
          await new Promise((resolve) => setTimeout(resolve, 5));
          continue;
        }
        const index = next++;
        busy += 1;
        try {
          await crawlOne({ ...entry, index });
        } catch (error) {
          failure ??= error;
        } finally {
          busy -= 1;
        }
      }
    });
    await Promise.all(workers);
    signal.throwIfAborted();
    if (failure !== null) throw failure;
    // Not one start URL could be read: the site is down rather than emptied; delete nothing.
    if (seeds > 0 && seedsRead === 0 && firstSeedError !== null) throw firstSeedError;
    yield* items;
  }

  async open(key: string): Promise<Readable> {
    const fetched = this.bodies.get(key);
    if (fetched?.file == null) throw new Error(`no body was fetched for ${key}`);
    this.bodies.delete(key);
    const file = fetched.file;
    const stream = createReadStream(file);
    stream.once('close', () => {
      rm(file, { force: true }).catch(() => {});
    });
    return stream;
  }

  close(): void {
    this.bodies.clear();
    this.spool?.then((dir) => rm(dir, { recursive: true, force: true })).catch(() => {});
  }

  /** Within the crawl's hosts (same_host), matching an include pattern (if any) and no exclude one. */
  private wanted(url: string): boolean {
    if (this.config.same_host !== false && !this.hosts.has(new URL(url).host)) return false;
    if (this.include.length > 0 && !this.include.some((re) => re.test(url))) return false;
    return !this.exclude.some((re) => re.test(url));
  }

  private fetchOptions(signal: AbortSignal, maxBytes: number) {
    return {
      policy: this.options.policy,
      maxBytes,
      connectTimeoutMs: this.options.connectTimeoutMs,
      totalTimeoutMs: this.options.totalTimeoutMs,
      maxRedirects: this.options.maxRedirects,
      signal,
      userAgent: CRAWLER_USER_AGENT,
    };
  }

  /**
   * The host's robots.txt, once per run: 2xx is obeyed, 4xx means no rules; an unreadable one
   * (5xx, unreachable) fails the listing, as the site cannot be crawled politely right now.
   */
  private async allowedByRobots(url: URL, signal: AbortSignal): Promise<boolean> {
    let robots = this.robots.get(url.origin);
    if (robots === undefined) {
      robots = this.withHostSlot(url.host, async () => {
        const robotsUrl = new URL('/robots.txt', url.origin);
        const body = await openUrl(robotsUrl, {
          ...this.fetchOptions(signal, MAX_ROBOTS_BYTES),
          passStatuses: ROBOTS_NO_RULES,
        });
        if (body.status >= 400) {
          body.stream.destroy();
          return null;
        }
        const text = (await readAll(body.stream)).toString('utf8');
        return robotsParser(robotsUrl.href, text);
      });
      this.robots.set(url.origin, robots);
    }
    const parsed = await robots;
    return parsed === null || parsed.isAllowed(url.href, CRAWLER_TOKEN) !== false;
  }

  private async fetchItem(
    url: URL,
    before: KnownItem | null,
    signal: AbortSignal,
  ): Promise<
    | { kind: 'gone' }
    | { kind: 'failed'; error: unknown }
    | { kind: 'ok'; finalUrl: string; etag: string; links: string[]; fetched: Fetched }
  > {
    // A conditional request only when the links of the page are kept (an unchanged page is still
    // followed).
    const headers: Record<string, string> = {};
    if (before !== null && before.links !== null) {
      if (before.etag.startsWith('etag:')) headers['if-none-match'] = before.etag.slice(5);
      else if (before.etag.startsWith('lm:')) headers['if-modified-since'] = before.etag.slice(3);
    }
    let body: FetchedBody;
    try {
      body = await openUrl(url, {
        ...this.fetchOptions(signal, this.options.maxBytes),
        headers,
        passStatuses: [304, 404, 410],
      });
    } catch (error) {
      if (signal.aborted) throw error;
      return { kind: 'failed', error };
    }
    if (body.status === 404 || body.status === 410) {
      body.stream.destroy();
      return { kind: 'gone' };
    }
    const finalUrl = normaliseUrl(body.finalUrl.href) ?? url.href;
    if (body.status === 304 && before !== null) {
      body.stream.destroy();
      return {
        kind: 'ok',
        finalUrl,
        etag: before.etag,
        links: before.links ?? [],
        fetched: { file: null, filename: filenameOf(body.finalUrl, false) },
      };
    }
    const html = isHtml(body.contentType);
    const file = path.join(await this.spoolDir(), createHash('sha256').update(url.href).digest('hex'));
    // The body goes to the spool as it arrives, hashed on the way; a page is also kept in memory
    // for its links.
    const hash = createHash('sha256');
    const kept: Buffer[] = [];
    try {
      await pipeline(
        body.stream,
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            if (html) kept.push(chunk);
            done(null, chunk);
          },
        }),
        createWriteStream(file),
      );
    } catch (error) {
      await rm(file, { force: true });
      if (signal.aborted) throw error;
      return { kind: 'failed', error };
    }
    const etag = header(body.headers.etag);
    const modified = header(body.headers['last-modified']);
    const token =
      etag !== null ? `etag:${etag}` : modified !== null ? `lm:${modified}` : `sha256:${hash.digest('hex')}`;
    const links = html ? extractLinks(Buffer.concat(kept), body.finalUrl) : [];
    return {
      kind: 'ok',
      finalUrl,
      etag: token,
      links,
      fetched: { file, filename: filenameOf(body.finalUrl, html) },
    };
  }

  private spoolDir(): Promise<string> {
    this.spool ??= mkdtemp(path.join(this.options.spoolDir ?? tmpdir(), 'docindex-web-'));
    return this.spool;
  }

  /** Runs `task` once the host has fewer than PER_HOST requests in flight. */
  private async withHostSlot<T>(host: string, task: () => Promise<T>): Promise<T> {
    while ((this.inFlight.get(host) ?? 0) >= PER_HOST) {
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(host) ?? [];
        list.push(resolve);
        this.waiting.set(host, list);
      });
    }
    this.inFlight.set(host, (this.inFlight.get(host) ?? 0) + 1);
    try {
      return await task();
    } finally {
      this.inFlight.set(host, (this.inFlight.get(host) ?? 1) - 1);
      this.waiting.get(host)?.shift()?.();
    }
  }

  /** The page URLs a sitemap (or a sitemap index, gzipped or not) lists. */
  private async sitemapUrls(sitemap: string, signal: AbortSignal): Promise<string[]> {
    const urls: string[] = [];
    const pending: Array<{ url: string; nesting: number }> = [{ url: sitemap, nesting: 0 }];
    let read = 0;
    while (pending.length > 0 && read < MAX_SITEMAPS && urls.length < this.config.max_pages) {
      const { url, nesting } = pending.shift() as { url: string; nesting: number };
      read += 1;
      const target = new URL(url);
      if (!(await this.allowedByRobots(target, signal))) continue;
      const body = await this.withHostSlot(target.host, async () => {
        const answer = await openUrl(target, this.fetchOptions(signal, MAX_SITEMAP_BYTES));
        return readAll(answer.stream);
      });
      const parsed = readSitemap(body);
      if (parsed.index) {
        if (nesting < MAX_SITEMAP_NESTING) {
          for (const loc of parsed.locs) {
            const child = normaliseUrl(loc);
            if (child !== null) pending.push({ url: child, nesting: nesting + 1 });
          }
        }
      } else {
        urls.push(...parsed.locs);
      }
    }
    return urls;
  }
}

/** The href of every `<a>` and `<area>` (against `<base href>` when the page has one). */
function extractLinks(bytes: Buffer, pageUrl: URL): string[] {
  const links = new Set<string>();
  let base: URL = pageUrl;
  const parser = new HtmlParser(
    {
      onopentag(name, attributes) {
        const href = attributes.href;
        if (href === undefined) return;
        if (name === 'base') {
          try {
            base = new URL(href, pageUrl);
          } catch {
            // An unusable base leaves the page's own URL as the base.
          }
        } else if (name === 'a' || name === 'area') {
          const url = normaliseUrl(href, base);
          if (url !== null) links.add(url);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.end(bytes.toString('utf8'));
  return [...links];
}

function isHtml(contentType: string | null): boolean {
  return contentType !== null && HTML_TYPES.has(contentType.split(';')[0]?.trim().toLowerCase() ?? '');
}

/** The name format detection sees: the URL's last segment, `.html` added to a page without one. */
function filenameOf(url: URL, html: boolean): string {
  const last = decodeURIComponentSafe(url.pathname.split('/').pop() ?? '');
  const name = last === '' ? 'index' : last;
  return html && !/\.x?html?$/i.test(name) ? `${name}.html` : name;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function header(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? null : first;
}

function failureOf(error: unknown): { code: string; message: string } {
  if (error instanceof FetchError) return { code: error.code, message: error.message };
  return { code: 'url_unreachable', message: 'the page could not be read' };
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
