// Reading the XML parts of an Office or OpenDocument package as a stream of events (saxes, a strict
// non-validating parser): the readers of pptx, odt and epub only need the text and a few element
// names, so no tree is built. Element names are given without their prefix ("a:t" → "t"): the
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
  const parser = new SaxesParser();
  let failure: Error | null = null;
  parser.on('error', (error) => {
    failure ??= error;
  });
  if (events.open) {
    const open = events.open;
    parser.on('opentag', (tag) => {
      // Under their full names, and under their local names where no unprefixed one has it
      // (<p:sldId id="256" r:id="rId2"/> keeps both).
      const attributes: Record<string, string> = {};
      for (const [key, value] of Object.entries(tag.attributes)) {
        attributes[key] = typeof value === 'string' ? value : String((value as { value: unknown }).value);
      }
      for (const [key, value] of Object.entries(attributes)) {
        const local = localName(key);
        if (!(local in attributes)) attributes[local] = value;
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
  try {
    parser.write(decodeXml(xml)).close();
  } catch (error) {
    failure ??= error instanceof Error ? error : new Error(String(error));
  }
  if (failure) throw new ExtractionError('corrupt', `${what} is not well-formed XML (${failure.message})`);
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
