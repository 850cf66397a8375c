// The failures a URL download can end in. Their codes are the `error.code` a document shows when
// its fetch stage fails, so they are part of the public API; `transient` tells the worker whether
// trying again soon could succeed.
import type { FailureCode } from '../../domain/types.js';
import { PipelineError } from '../errors.js';

export const FETCH_FAILURE_CODES = [
  'url_unreachable',
  'url_blocked',
  'too_large',
  'timeout',
  'too_many_redirects',
  'unsupported_format',
] as const satisfies readonly FailureCode[];

export type FetchFailureCode = (typeof FETCH_FAILURE_CODES)[number];

export class FetchError extends PipelineError {
  declare readonly code: FetchFailureCode;

  // Messages end up on the document and in logs, so they are built from redactUrl() and never
  // from a raw URL: pre-signed query strings must not leak.
  constructor(code: FetchFailureCode, message: string, transient: boolean) {
    super(code, message, transient);
    this.name = 'FetchError';
  }
}
