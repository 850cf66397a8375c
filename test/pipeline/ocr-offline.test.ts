// Nothing OCR needs is downloaded at run time: the Tesseract wasm, the PDF renderer and the
// language data come from npm packages. Proven by running OCR in a network namespace where no
// connection to anything can be made (`unshare -rn`, not even loopback): a CDN fetch there fails.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { characterAccuracy } from '../../bench/ocr-accuracy.js';
import { runCommand } from '../helpers/process.js';
import { CORPUS_DIR, itWithCorpus } from '../helpers/shared.js';
import { ROOT } from './extract-support.js';

const canUnshare = spawnSync('unshare', ['-rn', 'true']).status === 0;

describe.skipIf(!canUnshare)('OCR without a network', () => {
  itWithCorpus(
    'reads an image and a scanned PDF page inside a namespace with no network',
    async () => {
      const run = await runCommand(
        'unshare',
        ['-rn', 'sh', '-c', 'exec node_modules/.bin/vite-node test/pipeline/ocr-offline-probe.ts'],
        { cwd: ROOT, timeoutMs: 600_000 },
      );
      expect(run.status, run.stderr).toBe(0);
      const lines = run.stdout.trim().split('\n');
      const read = JSON.parse(lines[lines.length - 1] ?? '{}') as Record<string, unknown>;
      const truth = readFileSync(path.join(CORPUS_DIR, 'ocr-image/testocr.expected.txt'), 'utf8');
      expect(characterAccuracy(String(read.image), truth)).toBeGreaterThanOrEqual(0.95);
      expect(read.imageOcrPages).toBe(1);
      expect(read.pdf).toContain('Docling');
      expect(read.pdfOcrPages).toBe(1);
    },
    600_000,
  );
});
