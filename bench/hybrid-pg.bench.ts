// Section "hybrid-pg": bench/hybrid.bench.ts on PostgreSQL (DATABASE_URL), a section of its own so
// each backend's figures can be re-measured alone (a 1M build on each takes a while).
export { runPostgres as run } from './hybrid.bench.js';
