// Reading the XML parts of an Office or OpenDocument package as a stream of events (saxes, a strict
// non-validating parser): the readers of pptx, xlsx, odt and epub only need the text and a few
// element names, so no tree is built, and a part too large to hold (a big worksheet) is parsed as it
// inflates. Element names are given without their prefix ("a:t" → "t"): the
// prefixes are conventions, and a reader matching on them would miss a file that chose others.
// Entity declarations never get here: shared/archive.ts refuses parts that carry them.
import { SaxesParser } from 'saxes';
import { ExtractionError } from '../../extract/errors.js';
import { bomOf } from '../text/decode.js';

export interface XmlEvents {
  open?(name: string, attributes: Readonly<Record<string, string>>): void;
  close?(name: string): void;
  text?(text: string): void;
}

/** Feeds `xml`'s events to `events`; malformed XML (a truncated part, say) → corrupt. */
export function readXml(xml: Uint8Array, events: XmlEvents, what: string): void {
  const reader = xmlReader(events, what);
  reader.write(decodeXml(xml));
  reader.end();
}

/**
 * readXml over a part that arrives in pieces (a ZIP entry as it inflates): yields after each
 * piece is parsed, so a reader can pass on what it has before the next, and never holds the part.
 */
export async function* readXmlPieces(
  pieces: AsyncIterable<Uint8Array>,
  events: XmlEvents,
  what: string,
): AsyncGenerator<void> {
  const reader = xmlReader(events, what);
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  for await (const bytes of pieces) {
    // The first piece tells the encoding (XML 1.0, §4.3.3); TextDecoder drops the BOM itself.
    decoder ??= new TextDecoder(bomOf(bytes)?.encoding ?? 'utf-8');
    reader.write(decoder.decode(bytes, { stream: true }));
    yield;
  }
  reader.write(decoder?.decode() ?? '');
  reader.end();
}

/** A saxes parser feeding `events`, whose first error is thrown as corrupt by the next write or end. */
function xmlReader(events: XmlEvents, what: string): { write(text: string): void; end(): void } {
  const parser = new SaxesParser();
  let failure: Error | null = null;
  parser.on('error', (error) => {
    failure ??= error;
  });
  if (events.open) {
    const open = events.open;
    parser.on('opentag', (tag) => {
      // Without namespace processing (the default) the values are strings. Most tags have no
      // prefixed attribute and are passed on as they are: a worksheet has millions of <c r s t>.
      const attributes = tag.attributes as Record<string, string>;
      for (const key in attributes) {
        if (key.includes(':')) {
          open(localName(tag.name), withLocalNames(attributes));
          return;
        }
      }
      open(localName(tag.name), attributes);
    });
  }
  if (events.close) {
    const close = events.close;
    parser.on('closetag', (tag) => close(localName(tag.name)));
  }
  if (events.text) {
    const text = events.text;
    parser.on('text', text);
    parser.on('cdata', text);
  }
  const run = (step: () => void) => {
    try {
      step();
    } catch (error) {
      if (error instanceof ExtractionError) throw error; // a reader's own verdict on the content
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
    if (failure) throw new ExtractionError('corrupt', `${what} is not well-formed XML (${failure.message})`);
  };
  return {
    write: (text) => run(() => parser.write(text)),
    end: () => run(() => parser.close()),
  };
}

/**
 * Attributes under their full names, and under their local names where no unprefixed one has it
 * (<p:sldId id="256" r:id="rId2"/> keeps both).
 */
function withLocalNames(attributes: Readonly<Record<string, string>>): Record<string, string> {
  const all = { ...attributes };
  for (const [key, value] of Object.entries(attributes)) {
    const local = localName(key);
    if (!(local in all)) all[local] = value;
  }
  return all;
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** XML packages are UTF-8 or UTF-16 with a BOM (XML 1.0, §4.3.3). */
function decodeXml(bytes: Uint8Array): string {
  const bom = bomOf(bytes);
  return new TextDecoder(bom?.encoding ?? 'utf-8').decode(bytes);
}

/** An OPC relationships part (.rels): id → { target, type }. */
export function readRelationships(
  xml: Uint8Array | undefined,
  what: string,
): Map<string, { target: string; type: string }> {
  const relationships = new Map<string, { target: string; type: string }>();
  if (!xml) return relationships;
  readXml(
    xml,
    {
      open(name, attributes) {
        if (name === 'Relationship' && attributes.Id && attributes.Target) {
          relationships.set(attributes.Id, { target: attributes.Target, type: attributes.Type ?? '' });
        }
      },
    },
    what,
  );
  return relationships;
}

/** A relationship's target as a lowercase part name: relative to `baseDir` ("ppt/slides"), or absolute. */
export function resolvePart(baseDir: string, target: string): string {
  const segments = target.startsWith('/') ? [] : baseDir.split('/').filter((s) => s !== '');
  for (const segment of target.replace(/^\//, '').split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '.' && segment !== '') segments.push(segment);
  }
  return decodeURIComponentSafe(segments.join('/')).toLowerCase();
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
