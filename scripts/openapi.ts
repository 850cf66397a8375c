// `node dist/scripts/openapi.js [file]`: writes the OpenAPI document the server serves at
// /openapi.json (to the file, else to stdout), for `npm run lint:openapi` and for client
// generators, once @apidevtools/swagger-parser has found it valid (else it exits 1). The app is built as `docindex serve` builds it, without listening, on an empty
// embedded store in a temporary folder, with an ADMIN_TOKEN so that the admin API is in it too.
// Nothing from the caller's environment is read: the document is the same wherever it is made.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/start/logger.js';
import { createRuntime } from '../src/start/runtime.js';

const target = process.argv[2];
const dataDir = mkdtempSync(path.join(tmpdir(), 'docindex-openapi-'));
try {
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN: randomBytes(32).toString('hex'),
  });
  const runtime = await createRuntime(config, createLogger('silent'));
  try {
    const app = await buildApp(runtime.appDeps);
    try {
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (response.statusCode !== 200) {
        throw new Error(`GET /openapi.json answered ${response.statusCode}: ${response.body}`);
      }
      const document = response.json();
      // validate() dereferences what it is given: it gets a copy.
      await SwaggerParser.validate(structuredClone(document));
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (target) writeFileSync(target, text);
      else process.stdout.write(text);
    } finally {
      await app.close();
    }
  } finally {
    await runtime.close();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
