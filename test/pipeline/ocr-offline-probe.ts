// Runs inside a network namespace with no usable interface (started by ocr-offline.test.ts): OCR
// of an image and of a scanned PDF page must work there, since the engine, its wasm and its
// language data all come from installed packages. Prints one JSON line of what it read.
import path from 'node:path';
import { createPipelineThreads } from '../../src/pipeline/extract/index.js';
import { CORPUS_DIR } from '../helpers/shared-dir.js';

const extractor = createPipelineThreads({
  maxWorkers: 1,
  timeoutMs: 600_000,
  maxHeapMb: 512,
  pdfMaxPages: 10,
  ocr: { enabled: true, languages: ['eng'] },
});
try {
  const image = await extractor.extract(path.join(CORPUS_DIR, 'ocr-image/testocr.png'), 'png');
  const pdf = await extractor.extract(path.join(CORPUS_DIR, 'scanned-pdf/ocr_test.pdf'), 'pdf');
  console.log(
    JSON.stringify({
      image: image.text,
      imageOcrPages: image.ocrPages,
      pdf: pdf.text,
      pdfOcrPages: pdf.ocrPages,
    }),
  );
} finally {
  await extractor.close();
}
