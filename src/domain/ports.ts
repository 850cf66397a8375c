// The ports: every side effect the domain needs, as interfaces. Adapters under src/adapters
// implement them (SQLite and PostgreSQL stores, table-backed and BullMQ queues, memory and Redis
// limiters, filesystem, PostgreSQL and S3 blob stores); test/contract runs one conformance suite per port.
// Each family lives in its own file under ports/; this module gathers them, so callers import
// every port from one place.
export * from './ports/blob-store.js';
export * from './ports/clock.js';
export * from './ports/document-pipeline.js';
export * from './ports/document-store.js';
export * from './ports/embeddings.js';
export * from './ports/idempotency-store.js';
export * from './ports/job-queue.js';
export * from './ports/keyword-index.js';
export * from './ports/org-store.js';
export * from './ports/rate-limiter.js';
export * from './ports/reranker.js';
export * from './ports/tracing.js';
export * from './ports/usage-store.js';
export * from './ports/vectors.js';
