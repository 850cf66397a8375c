// A small web site on 127.0.0.1 for crawl tests: pages are set and changed by the test, every
// request is logged (path, status, conditional headers, User-Agent), and a page with an `etag` or
// `lastModified` answers a matching conditional request with 304.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SitePage {
  status?: number;
  body?: string | Buffer;
  type?: string;
  etag?: string;
  lastModified?: string;
  /** A redirect (with status 301/302/307/308). */
  location?: string;
}

export interface SiteRequest {
  path: string;
  status: number;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  userAgent: string | null;
}

export interface LoopbackSite {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  pages: Map<string, SitePage>;
  requests: SiteRequest[];
  close(): Promise<void>;
}

export async function startLoopbackSite(pages: Record<string, SitePage> = {}): Promise<LoopbackSite> {
  const site = new Map(Object.entries(pages));
  const requests: SiteRequest[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const page = site.get(path);
    const ifNoneMatch = req.headers['if-none-match'] ?? null;
    const ifModifiedSince = req.headers['if-modified-since'] ?? null;
    let status = page === undefined ? 404 : (page.status ?? 200);
    if (
      page !== undefined &&
      status === 200 &&
      ((page.etag !== undefined && ifNoneMatch === page.etag) ||
        (page.etag === undefined && page.lastModified !== undefined && ifModifiedSince === page.lastModified))
    ) {
      status = 304;
    }
    requests.push({
      path,
      status,
      ifNoneMatch,
      ifModifiedSince,
      userAgent: req.headers['user-agent'] ?? null,
    });
    const headers: Record<string, string> = {};
    if (page?.etag !== undefined) headers.etag = page.etag;
    if (page?.lastModified !== undefined) headers['last-modified'] = page.lastModified;
    if (page?.location !== undefined) headers.location = page.location;
    if (status !== 200) {
      res.writeHead(status, headers).end();
      return;
    }
    headers['content-type'] = page?.type ?? 'text/html; charset=utf-8';
    res.writeHead(200, headers).end(page?.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    pages: site,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An HTML page with a title, a paragraph and links. */
export function htmlPage(title: string, text: string, links: string[] = []): string {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  return `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p><ul>${anchors}</ul></body></html>`;
}
