// The API's wire shapes: the request and response schemas of every route (TypeBox, so JSON Schema
// and a TypeScript type each), one source for the routes' validation and serialisation, the
// OpenAPI document and the TypeScript client's types. A module per resource, and common.ts and
// problem-details.ts for what they share. The server (http/) and the client import it, and the
// MCP tools through the client's types; it imports none of them, only the domain's limits, error
// codes and record fields.
export * from './admin.js';
export * from './common.js';
export * from './document-changes.js';
export * from './documents.js';
export * from './evaluations.js';
export * from './ingest.js';
export * from './org.js';
export * from './partitions.js';
export * from './problem-details.js';
export * from './query.js';
export * from './sources.js';
export * from './usage.js';
export * from './webhooks.js';
