// .md: Markdown, handled as plain text (see text/plain-text.ts); the processor tells the chunker
// to split on its headings.
export { plainTextFormat as mdFormat } from '../text/plain-text.js';
