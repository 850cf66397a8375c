// The layering rule of docs/ARCHITECTURE.md, checked on every import in src/: domain and pipeline
// know no framework, driver, MCP SDK or configuration; the API's wire shapes (wire/) know only the
// domain and TypeBox; HTTP and the command line know no adapter; the clients (client/) know the wire
// shapes and the domain but no server; the MCP tools (mcp/) know the domain and the client but no
// server, adapter or command line; only the composition roots (start/) use the command line; an
// adapter does not reach into another adapter's folder, and a document store does not name the
// keyword index it writes. The exceptions still to remove are listed by name, and the list
// fails as soon as one of them is gone, so it can only shrink.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(ROOT, 'src');

/** Packages that are a framework or a driver. */
const DRIVERS = [/^fastify$/, /^@fastify\//, /^better-sqlite3$/, /^pg$/, /^pg-/, /^ioredis$/, /^bullmq$/];

/** The MCP SDK and the schema library its tool definitions take. */
const MCP_LIBRARIES = [/^@modelcontextprotocol\//, /^zod(\/|$)/];

/** Adapter modules that several adapters share on purpose (technology-neutral helpers). */
const SHARED_ADAPTER_MODULES = [
  'adapters/blob/byte-limit.ts',
  'adapters/blob/local-copy.ts',
  'adapters/lease-queue/engine.ts',
  'adapters/onnx/model-thread.ts',
  'adapters/onnx/thread-model.ts',
  'adapters/ratelimit/fixed-window.ts',
  'adapters/sql-rows/org-row.ts',
  'adapters/sql-rows/document-row.ts',
  'adapters/sql-rows/record-snapshot.ts',
  'adapters/sql-rows/webhook-row.ts',
  'adapters/sql-rows/vector-stage.ts',
  'adapters/sign-scan/scan.ts',
  'adapters/sign-scan/slots.ts',
  'adapters/sign-scan/byte-budget-lru.ts',
  'adapters/sign-scan/candidates.ts',
];

/** Adapter → other adapter imports still to be removed (none left; keep the check strict). */
const KNOWN_VIOLATIONS: string[] = [];

interface Import {
  /** The importing file, relative to src/. */
  from: string;
  /** A package name, or a file relative to src/ for relative imports. */
  to: string;
  relative: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = path.relative(SRC, file);
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers.map((specifier) => {
    if (!specifier.startsWith('.')) return { from, to: specifier, relative: false };
    const target = path.relative(SRC, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts');
    return { from, to: target, relative: true };
  });
}

const imports = sourceFiles(SRC).flatMap(importsOf);
const within = (dir: string) => (p: string) => p.startsWith(`${dir}/`);

describe('layering', () => {
  it('reads the imports of every source file', () => {
    expect(imports.length).toBeGreaterThan(200);
    expect(imports).toContainEqual({ from: 'app.ts', to: 'fastify', relative: false });
  });

  it('domain and pipeline import no framework, driver, MCP SDK, configuration, adapter, HTTP, wire, MCP or start code', () => {
    const offending = imports.filter(
      (i) =>
        (within('domain')(i.from) || within('pipeline')(i.from)) &&
        (i.relative
          ? ['config', 'adapters', 'http', 'cli', 'start', 'mcp', 'wire'].some((dir) => within(dir)(i.to))
          : [...DRIVERS, ...MCP_LIBRARIES].some((library) => library.test(i.to))),
    );
    expect(offending).toEqual([]);
  });

  it('the wire shapes import only each other, the domain and TypeBox', () => {
    // wire/ holds the API's request and response schemas, which the server (http/) validates and
    // documents with and the clients (client/, and mcp/ through it) take their types from: it sits
    // below all of them and knows none of them.
    const offending = imports.filter(
      (i) =>
        within('wire')(i.from) &&
        (i.relative ? !within('wire')(i.to) && !within('domain')(i.to) : i.to !== '@sinclair/typebox'),
    );
    expect(offending).toEqual([]);
    expect(imports).toContainEqual({ from: 'client/types.ts', to: 'wire/index.ts', relative: true });
    expect(imports.filter((i) => within('http')(i.from) && within('wire')(i.to)).length).toBeGreaterThan(10);
  });

  it('the clients import no server, adapter, pipeline, MCP, configuration, command line or start code', () => {
    // client/ talks to a docindex server over HTTP: its types come from the wire shapes, its rules
    // (formats, backoff, error codes) from the domain.
    const offending = imports.filter(
      (i) =>
        within('client')(i.from) &&
        (i.relative
          ? ['adapters', 'http', 'pipeline', 'mcp', 'config', 'cli', 'start'].some((dir) =>
              within(dir)(i.to),
            ) || i.to === 'app.ts'
          : [...DRIVERS, ...MCP_LIBRARIES].some((library) => library.test(i.to))),
    );
    expect(offending).toEqual([]);
  });

  it('the MCP tools import no framework, driver, adapter, HTTP, pipeline, configuration, command line or start code', () => {
    // mcp/ defines the tools once against DocindexApi and may use the domain (types, errors,
    // scopes) and the client (the stdio server calls a docindex server with it). The HTTP endpoint
    // (http/routes/mcp/) and the command (cli/mcp-command.ts) bring it to its two transports.
    const offending = imports.filter(
      (i) =>
        within('mcp')(i.from) &&
        (i.relative
          ? ['adapters', 'http', 'pipeline', 'config', 'cli', 'start'].some((dir) => within(dir)(i.to)) ||
            i.to === 'app.ts'
          : DRIVERS.some((driver) => driver.test(i.to))),
    );
    expect(offending).toEqual([]);
    expect(
      imports.filter((i) => within('mcp')(i.from) && MCP_LIBRARIES.some((l) => l.test(i.to))).length,
    ).toBeGreaterThan(0);
  });

  it('only the HTTP layer and the command line import the MCP tools', () => {
    const offending = imports.filter(
      (i) =>
        i.relative &&
        within('mcp')(i.to) &&
        !within('mcp')(i.from) &&
        !within('http')(i.from) &&
        !within('cli')(i.from),
    );
    expect(offending).toEqual([]);
  });

  it('HTTP code imports no adapter and no composition root', () => {
    const offending = imports.filter(
      (i) =>
        (within('http')(i.from) || i.from === 'app.ts') &&
        i.relative &&
        (within('adapters')(i.to) || within('start')(i.to) || within('config')(i.to) || within('cli')(i.to)),
    );
    expect(offending).toEqual([]);
  });

  it('the command line imports no adapter, server code, framework or driver: start/ hands it what it runs', () => {
    // cli/ may use the client, domain types and errors, and config's ConfigError; serving and the
    // runtime are reached only through what start/cli.ts passes in.
    const offending = imports.filter(
      (i) =>
        within('cli')(i.from) &&
        (i.relative
          ? ['adapters', 'http', 'pipeline', 'start'].some((dir) => within(dir)(i.to)) || i.to === 'app.ts'
          : DRIVERS.some((driver) => driver.test(i.to))),
    );
    expect(offending).toEqual([]);
    expect(imports.filter((i) => within('cli')(i.from)).length).toBeGreaterThan(10);
  });

  it('only the composition roots import the command line', () => {
    const offending = imports.filter(
      (i) => i.relative && within('cli')(i.to) && !within('cli')(i.from) && !within('start')(i.from),
    );
    expect(offending).toEqual([]);
    expect(imports).toContainEqual({ from: 'start/cli.ts', to: 'cli/main.ts', relative: true });
  });

  it('a document store names no keyword index: start/ hands it one as its writer port', () => {
    // KeywordIndexWriter (domain/ports/keyword-index.ts) is all a record store knows of the index
    // it writes, so a new keyword backend is its own folder and a line of the composition root,
    // never an edit of the stores. A store's parts (adapters/<backend>/documents/) count as it.
    const stores = imports.filter((i) =>
      /^adapters\/[^/]+\/(document-store|documents\/[^/]+)\.ts$/.test(i.from),
    );
    expect(new Set(stores.map((i) => i.from)).size).toBeGreaterThanOrEqual(2);
    const offending = stores.filter((i) => i.relative && /^adapters\/[^/]+\/keyword\//.test(i.to));
    expect(offending).toEqual([]);
  });

  it('no adapter reaches into another adapter’s folder, beyond the listed exceptions', () => {
    const folderOf = (p: string) => p.split('/').slice(0, 2).join('/');
    const crossings = imports
      .filter(
        (i) =>
          i.relative &&
          within('adapters')(i.from) &&
          within('adapters')(i.to) &&
          folderOf(i.from) !== folderOf(i.to) &&
          !SHARED_ADAPTER_MODULES.includes(i.to),
      )
      .map((i) => `${i.from} → ${i.to}`);
    // Equal, not contained: an exception that is gone must leave the list too.
    expect([...new Set(crossings)].sort()).toEqual([...KNOWN_VIOLATIONS].sort());
  });
});
