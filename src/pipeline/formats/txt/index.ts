// .txt: plain text, UTF-8 or UTF-16 with a BOM (see text/plain-text.ts).
export { plainTextFormat as txtFormat } from '../text/plain-text.js';
