// Text extraction for file and URL ingest: which format a stored file is (detectFormat, from its
// bytes) and its text (createPipelineThreads, in capped worker threads). The rest of the service
// imports only this module.
export { type DetectInput, type DetectResult, detectFormat } from './detect.js';
export { type ExtractionCode, ExtractionError } from './errors.js';
export { createPipelineThreads, finishRunFor } from './pool.js';
export type {
  ExtractedText,
  PageSpan,
  PipelineThreadOptions,
  PipelineThreads,
  SourceFormat,
} from './types.js';
export { DEFAULT_MAX_TEXT_CHARS } from './types.js';
