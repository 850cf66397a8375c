// E-mail text: the headers a reader looks at (From, To, Cc, Date, Subject), the body (the plain
// part, or the HTML part through the HTML walk when there is no plain one), then every attachment
// in a format docindex reads, each under an "Attachment: name" line, extracted by that format's
// own extractor (a forwarded message is an .eml attachment and is read the same way, to a depth
// of three). mailparser (nodemailer's parser) does the MIME work: encodings, charsets, encoded
// words, attachments. An attachment that cannot be read is named, with why, and does not fail the
// message.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AddressObject, type Attachment, simpleParser } from 'mailparser';
import { formatSpec } from '../../../domain/formats.js';
import { ExtractionError } from '../../extract/errors.js';
import type { NestedFiles } from '../handler.js';
import { markupText } from '../html/extract.js';
import { normalizeText } from '../text/decode.js';

/** Forwarded messages inside forwarded messages: enough for real mail, not for a crafted spiral. */
const MAX_DEPTH = 3;
/** Pages read of a paged attachment (a PDF): the rest would dwarf the message it came with. */
const MAX_ATTACHMENT_PAGES = 1_000;

export function extractEmlText(filePath: string, nested: NestedFiles): Promise<string> {
  return messageText(filePath, 0, nested);
}

async function messageText(filePath: string, depth: number, nested: NestedFiles): Promise<string> {
  const source = await readFile(filePath);
  let mail: Awaited<ReturnType<typeof simpleParser>>;
  try {
    mail = await simpleParser(source, { skipImageLinks: true, skipTextLinks: true });
  } catch (error) {
    throw new ExtractionError(
      'corrupt',
      `the e-mail cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (mail.headerLines.length === 0) {
    throw new ExtractionError('corrupt', 'the file is not an e-mail message (it has no headers)');
  }
  const lines: string[] = [];
  const header = (name: string, value: string | undefined) => {
    if (value && value.trim() !== '') lines.push(`${name}: ${value.replace(/\s+/g, ' ').trim()}`);
  };
  header('From', addresses(mail.from));
  header('To', addresses(mail.to));
  header('Cc', addresses(mail.cc));
  header('Date', mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : undefined);
  header('Subject', mail.subject);
  const parts = [lines.join('\n')];
  const body = mail.text?.trim() ? mail.text : mail.html ? markupText(mail.html) : '';
  if (body.trim() !== '') parts.push(body.trim());
  const attachments = mail.attachments.filter((attachment) => !attachment.related);
  if (attachments.length > 0) {
    const dir = await mkdtemp(path.join(tmpdir(), 'docindex-eml-'));
    try {
      for (const [index, attachment] of attachments.entries()) {
        const text = await attachmentText(attachment, path.join(dir, String(index)), depth, nested);
        if (text !== null) parts.push(text);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return normalizeText(parts.filter((part) => part !== '').join('\n\n'))
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** "Attachment: name" and its text; null for one in a format docindex does not read (an image). */
async function attachmentText(
  attachment: Attachment,
  file: string,
  depth: number,
  nested: NestedFiles,
): Promise<string | null> {
  const isMessage = attachment.contentType === 'message/rfc822';
  const name = attachment.filename ?? (isMessage ? 'message.eml' : null);
  await writeFile(file, attachment.content);
  const format = await nested.formatOf({
    path: file,
    filename: name,
    declaredContentType: attachment.contentType,
  });
  if (format === null) return null;
  const title = `Attachment: ${name ?? formatSpec(format).name}`;
  try {
    let text: string;
    if (format === 'eml') {
      if (depth + 1 >= MAX_DEPTH)
        return `${title}\n\n(not read: forwarded more than ${MAX_DEPTH} levels deep)`;
      text = await messageText(file, depth + 1, nested);
    } else {
      const extractor = await nested.extractorOf(format);
      if (extractor.paged) {
        const doc = await extractor.openPaged(file);
        try {
          text = (await doc.pageTexts(1, Math.min(doc.numPages, MAX_ATTACHMENT_PAGES))).join('\n\n');
        } finally {
          await doc.close().catch(() => {});
        }
      } else {
        text = await extractor.extractText(file);
      }
    }
    return text.trim() === '' ? title : `${title}\n\n${text.trim()}`;
  } catch (error) {
    if (!(error instanceof ExtractionError)) throw error;
    return `${title}\n\n(not read: ${error.code})`;
  }
}

function addresses(value: AddressObject | AddressObject[] | undefined): string | undefined {
  if (!value) return undefined;
  return (Array.isArray(value) ? value : [value]).map((object) => object.text).join(', ');
}
