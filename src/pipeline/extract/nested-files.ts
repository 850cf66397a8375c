// The files inside a file (an e-mail's attachments) are read like any stored file: detection names
// their format from their bytes and the registry gives that format's extractor. Built here, beside
// detection, and handed to each format's loadExtractor, so no format module imports the registry.
import type { NestedFiles } from '../formats/handler.js';
import { FORMAT_HANDLERS } from '../formats/handlers.js';
import { detectFormat } from './detect.js';

export const nestedFiles: NestedFiles = {
  formatOf: async (file) => {
    const detected = await detectFormat(file);
    return detected.ok ? detected.format : null;
  },
  extractorOf: (format) => FORMAT_HANDLERS[format].loadExtractor(nestedFiles),
};
