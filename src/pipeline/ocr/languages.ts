// Which OCR languages are installed: each is an npm package @tesseract.js-data/<code> whose
// traineddata ships inside it, so nothing is ever downloaded. Read by the composition root to
// refuse an OCR_LANGUAGES naming one that is not installed, and by the OCR engine to find the data.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The language data packages' scope folder, found from the one package the project depends on. */
function dataScopeDir(): string | null {
  try {
    return path.dirname(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')));
  } catch {
    return null;
  }
}

/** Where a language package keeps its data; the package's own `langPath`, so its choice of model. */
export function languageDataFile(code: string): string {
  const described = require(`@tesseract.js-data/${code}`) as { langPath: string; gzip?: boolean };
  return path.join(described.langPath, `${code}.traineddata${described.gzip === false ? '' : '.gz'}`);
}

/** Codes of every installed language (eng, deu, …), sorted. */
export function installedOcrLanguages(): string[] {
  const dir = dataScopeDir();
  if (!dir) return [];
  return readdirSync(dir)
    .filter((code) => /^[a-z_]+$/i.test(code) && existsSync(path.join(dir, code, 'package.json')))
    .filter((code) => {
      try {
        return existsSync(languageDataFile(code));
      } catch {
        return false;
      }
    })
    .sort();
}

/** The languages of `requested` that are not installed. */
export function missingOcrLanguages(requested: readonly string[]): string[] {
  const installed = new Set(installedOcrLanguages());
  return requested.filter((code) => !installed.has(code));
}
