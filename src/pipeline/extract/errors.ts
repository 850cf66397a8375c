// The error extraction throws for a document that cannot be turned into text: a PipelineError
// (never transient: the same bytes fail the same way) with an extraction code. Anything else thrown
// by the extractor (closed pool, a worker thread that could not start) is an infrastructure fault
// worth retrying.
import type { FailureCode } from '../../domain/types.js';
import { PipelineError } from '../errors.js';

/** Why a document's bytes gave no text; the code its `failed` status carries. */
export const EXTRACTION_CODES = [
  'unsupported_format',
  'too_large',
  'encrypted',
  'corrupt',
  'archive_limits',
  'timeout',
  'no_text',
] as const satisfies readonly FailureCode[];

export type ExtractionCode = (typeof EXTRACTION_CODES)[number];

export class ExtractionError extends PipelineError {
  declare readonly code: ExtractionCode;

  constructor(code: ExtractionCode, message: string) {
    super(code, message, false);
    this.name = 'ExtractionError';
  }
}
