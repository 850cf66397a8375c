// The one error type extraction throws for a document that cannot be turned into text; its code
// is what the document's `error.code` shows (the README lists them). Anything else thrown by the extractor
// (closed pool, a worker thread that could not start) is an infrastructure fault worth retrying.
import type { ExtractionCode } from './types.js';

export class ExtractionError extends Error {
  constructor(
    readonly code: ExtractionCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExtractionError';
  }
}
