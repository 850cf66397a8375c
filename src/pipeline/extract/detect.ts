// Decides which extractor a stored file goes to, from its bytes: a file's name and a server's
// Content-Type only choose between formats the bytes allow, because a client can claim anything.
// Refusals carry a sentence a user can act on ("report.pdf is not a PDF (starts with PNG
// signature)"); they become 415 at upload and `failed: unsupported_format` after a download.
// Each format's own checks are in pipeline/formats/<id>/; this module only orders them.
import { open } from 'node:fs/promises';
import path from 'node:path';
import {
  FORMAT_BY_EXTENSION,
  FORMAT_BY_MEDIA_TYPE,
  FORMAT_IDS,
  type FormatId,
  formatSpec,
  SUPPORTED_FORMATS,
} from '../../domain/formats.js';
import type { Probe } from '../formats/handler.js';
import { FALLBACK_FORMAT, FORMAT_HANDLERS } from '../formats/handlers.js';
import { signatureOf } from '../formats/sniff.js';
import type { SourceFormat } from './types.js';

export type DetectResult = { ok: true; format: SourceFormat } | { ok: false; detail: string };

export interface DetectInput {
  path: string;
  /** Upload filename, or the last segment of a downloaded URL's path; null when there is none. */
  filename: string | null;
  /** Content-Type a server sent with a download. Never from an upload: clients label files wrongly. */
  declaredContentType?: string | null;
}

/** Enough to judge text by (well over the 8 KiB the signatures need), small enough to read per upload. */
const HEAD_BYTES = 64 * 1024;

/** The usual extension of every format, as a refusal lists them: ".pdf, .docx, …". */
const SUPPORTED_LIST = SUPPORTED_FORMATS.map((format) => format.extensions[0]).join(', ');

export async function detectFormat(input: DetectInput): Promise<DetectResult> {
  const label = input.filename ?? 'file';
  let head: Buffer;
  let size: number;
  try {
    const handle = await open(input.path, 'r');
    try {
      size = (await handle.stat()).size;
      head = Buffer.alloc(Math.min(size, HEAD_BYTES));
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      head = head.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    // Our own storage failing is not the user's file being wrong.
    throw new Error(
      `cannot read the stored file (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (size === 0 || head.length === 0) return refuse(`${label} is empty`);
  const truncated = head.length < size;

  const extension = input.filename ? path.extname(input.filename).slice(1).toLowerCase() : '';
  const fromName = extension === '' ? undefined : FORMAT_BY_EXTENSION.get(`.${extension}`);
  const declared = mediaTypeOf(input.declaredContentType);
  const fromType = declared ? FORMAT_BY_MEDIA_TYPE.get(declared) : undefined;
  const probe: Probe = { head, truncated, path: input.path };

  if (fromName) return verify(fromName, probe, label);
  if (extension !== '' && !input.declaredContentType) {
    return refuse(
      `${label} has an unsupported file type (.${extension}${signatureSuffix(head)}); supported: ${SUPPORTED_LIST}`,
    );
  }

  // No usable extension (a URL like /download?id=3, a file named README): the bytes decide,
  // and a declared text type picks between the text formats the bytes cannot tell apart.
  const declaredKind = fromType ? FORMAT_HANDLERS[fromType].kind : null;
  const hints = { declaredText: declaredKind === 'text' };
  for (const format of FORMAT_IDS) {
    const handler = FORMAT_HANDLERS[format];
    if (handler.kind === 'binary' && handler.sniff?.(probe, hints)) return verify(format, probe, label);
  }
  // A server that promised a PDF and sent a login page did not send the document.
  if (fromType && declaredKind === 'binary') return verify(fromType, probe, label);
  const signature = signatureOf(head);
  if (signature) return refuse(`${label} is not a supported format (starts with ${signature} signature)`);
  if (fromType) return verify(fromType, probe, label);
  for (const format of FORMAT_IDS) {
    const handler = FORMAT_HANDLERS[format];
    if (handler.kind === 'text' && handler.sniff?.(probe, hints)) return verify(format, probe, label);
  }
  return verify(FALLBACK_FORMAT, probe, label);
}

async function verify(format: FormatId, probe: Probe, label: string): Promise<DetectResult> {
  const problem = await FORMAT_HANDLERS[format].validate(probe);
  if (problem === null) return { ok: true, format };
  return refuse(`${label} is not ${formatSpec(format).aFile} (${problem})`);
}

function signatureSuffix(head: Buffer): string {
  const signature = signatureOf(head);
  return signature ? `, starts with ${signature} signature` : '';
}

function mediaTypeOf(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  return contentType.split(';')[0]!.trim().toLowerCase() || null;
}

function refuse(detail: string): DetectResult {
  return { ok: false, detail };
}
