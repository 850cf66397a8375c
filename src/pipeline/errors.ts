// The one error type the pipeline fails a document with: `code` is the document's `error.code`
// (docs/API.md lists them), `transient` says whether trying again later could succeed. Extraction
// and fetch errors are kinds of it, with their narrower sets of codes. Anything else a stage
// throws (a database hiccup, a bug) is internal and retried while attempts remain.
import type { FailureCode } from '../domain/types.js';

export class PipelineError extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly transient = false,
  ) {
    super(message);
    this.name = 'PipelineError';
  }
}
