// GET /console — the web console (and its admin page, admin.html, which asks for the admin token
// and uses /admin/v1): a fixed set of static files from console/ (no build step),
// read once at start and served with a self-only Content-Security-Policy. Outside /v1 and without
// auth: the page asks for an API key and calls the API itself. The page's list of formats (the
// file input's `accept`, the captions of the upload and URL tabs) is filled in from the format
// registry when read. GET / sends a browser to the console (to the docs page in a build without
// the console files).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ADVERTISED_EXTENSIONS, listInProse, SUPPORTED_FORMATS } from '../../domain/formats.js';

const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'admin.html': 'text/html; charset=utf-8',
  'admin.js': 'text/javascript; charset=utf-8',
  'notices.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const satisfies Record<string, string>;

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** `{{name}}` in index.html → its text (HTML-escaped when filled in). */
const PAGE_VALUES: ReadonlyMap<string, string> = new Map([
  ['file-extensions', ADVERTISED_EXTENSIONS.join(',')],
  ['file-formats', listInProse(SUPPORTED_FORMATS.map((format) => format.name))],
]);

/** Fills in index.html's `{{name}}` placeholders; one the map does not know is a bug, found at start. */
export function fillConsolePage(html: string): string {
  return html.replace(/\{\{([a-z-]+)\}\}/g, (_match, name: string) => {
    const value = PAGE_VALUES.get(name);
    if (value === undefined) throw new Error(`console/index.html: unknown placeholder {{${name}}}`);
    return escapeHtml(value);
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** Registered with `{ prefix: '/console' }`. */
export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const dir = CONSOLE_DIR;
  if (dir === null) return; // a build without the console files serves the API alone
  const files = new Map<string, StaticFile>();
  for (const [name, type] of Object.entries(FILES)) {
    const raw = readFileSync(new URL(name, dir));
    const body = name === 'index.html' ? Buffer.from(fillConsolePage(raw.toString('utf8'))) : raw;
    files.set(name, {
      body,
      type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    });
  }

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
    return payload;
  });

  const send = (file: StaticFile, request: FastifyRequest, reply: FastifyReply) => {
    reply.header('etag', file.etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.type(file.type).send(file.body);
  };

  app.get('/', { schema: { hide: true } }, (request, reply) =>
    send(files.get('index.html')!, request, reply),
  );
  app.get<{ Params: { name: string } }>('/:name', { schema: { hide: true } }, (request, reply) => {
    const file = files.get(request.params.name);
    if (!file) return reply.callNotFound();
    return send(file, request, reply);
  });
}

/** GET (and HEAD) / → 302 to the console, the first page a browser pointed at the server wants. */
export function rootRedirect(app: FastifyInstance): void {
  const target = CONSOLE_DIR === null ? '/docs' : '/console';
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect(target, 302));
}

/** One of the console's files (the brand mark the docs page shows too), or null without them. */
export function readConsoleFile(name: keyof typeof FILES): Buffer | null {
  return CONSOLE_DIR === null ? null : readFileSync(new URL(name, CONSOLE_DIR));
}

// The console folder sits at the repository root: two levels above this file in src/, three in dist/src/.
function findConsoleDir(): URL | null {
  for (const relative of ['../../../console/', '../../../../console/']) {
    const dir = new URL(relative, import.meta.url);
    if (existsSync(new URL('index.html', dir))) return dir;
  }
  return null;
}

const CONSOLE_DIR = findConsoleDir();
