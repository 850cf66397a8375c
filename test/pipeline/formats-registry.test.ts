// The format registry (domain/formats.ts) and the format implementations (pipeline/formats/)
// agree: every listed format has a handler whose extractor is paged exactly when the registry
// says so (the pool splits paged files across threads, the worker reads them page by page), and
// every extension and media type leads to one format.
import { describe, expect, it } from 'vitest';
import { FORMAT_BY_EXTENSION, FORMAT_BY_MEDIA_TYPE, SUPPORTED_FORMATS } from '../../src/domain/formats.js';
import { nestedFiles } from '../../src/pipeline/extract/nested-files.js';
import { FORMAT_HANDLERS } from '../../src/pipeline/formats/handlers.js';

describe('format registry', () => {
  it('has a handler for each format, paged exactly when the registry says so', async () => {
    expect(Object.keys(FORMAT_HANDLERS).sort()).toEqual(SUPPORTED_FORMATS.map((f) => f.id).sort());
    for (const format of SUPPORTED_FORMATS) {
      const extractor = await FORMAT_HANDLERS[format.id].loadExtractor(nestedFiles);
      expect(extractor.paged, format.id).toBe(format.paged);
    }
  });

  it('claims each extension and media type for one format only, in lower case with a dot', () => {
    const extensions = SUPPORTED_FORMATS.flatMap((f) => [...f.extensions, ...f.otherExtensions]);
    const mediaTypes = SUPPORTED_FORMATS.flatMap((f) => [...f.mediaTypes]);
    expect(FORMAT_BY_EXTENSION.size).toBe(extensions.length);
    expect(FORMAT_BY_MEDIA_TYPE.size).toBe(mediaTypes.length);
    for (const extension of extensions) expect(extension).toMatch(/^\.[a-z0-9]+$/);
    for (const type of mediaTypes) expect(type).toBe(type.toLowerCase());
  });
});
