// What an API key may do. Every /v1 route declares the one scope it needs (http/plugins/
// authenticated.ts refuses a route without one at start); a key carries the scopes it was issued
// with, all of them unless it was made with fewer.

export const SCOPES = ['ingest', 'query', 'read', 'write', 'webhooks', 'sources'] as const;

export type Scope = (typeof SCOPES)[number];

/** What each scope allows, for docs/API.md, the OpenAPI document and the console. */
export const SCOPE_MEANINGS: Readonly<Record<Scope, string>> = {
  ingest: 'submit documents (text, file, URL)',
  query: 'search (POST /v1/query)',
  read: 'read documents, their status, chunks and lists, and usage',
  write: 'change and delete documents',
  webhooks: 'manage webhook endpoints',
  sources: 'manage sources (buckets kept in sync), start their runs and read them',
};

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** Deduplicated, in the canonical order of SCOPES; every scope when none are given. */
export function normaliseScopes(scopes: readonly Scope[] | undefined): Scope[] {
  if (scopes === undefined || scopes.length === 0) return [...SCOPES];
  const wanted = new Set(scopes);
  return SCOPES.filter((scope) => wanted.has(scope));
}
