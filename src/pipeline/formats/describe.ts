// How a refusal says what a file really is ("starts with PNG signature", "it is an HTML page").
import { looksLikeHtml, signatureOf } from './sniff.js';
import { textProblem } from './text/validate.js';

/** What the bytes look like, for a refusal. */
export function describe(head: Buffer): string {
  const signature = signatureOf(head);
  if (signature) return `starts with ${signature} signature`;
  if (looksLikeHtml(head)) return 'it is an HTML page';
  if (textProblem(head, true, true) === null) return 'it is plain text';
  const first = [...head.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
  return `starts with bytes ${first}`;
}
