// EPUB text: META-INF/container.xml names the package document (OPF), whose spine lists the
// chapters in reading order; each chapter (XHTML) goes through the same HTML walk as an uploaded
// page, with its headings as Markdown headings, so the chunker splits at chapters and sections.
// Chapters are read whole (no Readability: all of a chapter is the book's text). EPUB 2 chapters
// carry the XHTML DOCTYPE, so the archive check refuses entity declarations rather than DTDs;
// linkedom never resolves external entities or DTDs either way. A book whose chapters are
// encrypted (DRM, META-INF/encryption.xml) fails `encrypted`; obfuscated fonts do not matter.
import { ExtractionError } from '../../extract/errors.js';
import { markupText } from '../html/extract.js';
import { checkArchive, readZipEntries, type ZipFormat } from '../shared/archive.js';
import { readXml, resolvePart } from '../shared/xml.js';
import { normalizeText } from '../text/decode.js';

export const EPUB: ZipFormat = {
  name: 'EPUB',
  plural: 'EPUB books',
  aKind: 'an EPUB book',
  required: ['mimetype', 'meta-inf/container.xml'],
  parsedXml: (name) => /\.(xml|opf|ncx|xhtml|html|htm|x?html?)$/.test(name),
  refuse: 'entity',
};

const CHAPTER_TYPES = new Set(['application/xhtml+xml', 'text/html', 'application/x-dtbook+xml']);

export async function extractEpubText(filePath: string): Promise<string> {
  await checkArchive(filePath, EPUB);
  // Every part but images, fonts and media: the chapters are known only once the OPF is read.
  const parts = await readZipEntries(
    filePath,
    EPUB,
    (name) => !/\.(jpe?g|png|gif|svg|webp|ttf|otf|woff2?|mp3|mp4|css)$/.test(name),
  );
  const container = parts.get('meta-inf/container.xml')!;
  let opfPath: string | null = null;
  readXml(
    container,
    {
      open(name, attributes) {
        if (name === 'rootfile' && opfPath === null && attributes['full-path']) {
          opfPath = resolvePart('', attributes['full-path']);
        }
      },
    },
    'the EPUB part META-INF/container.xml',
  );
  // Assigned in a callback, which the compiler does not follow.
  const packagePath = opfPath as string | null;
  const opf = packagePath === null ? undefined : parts.get(packagePath);
  if (packagePath === null || !opf) {
    throw new ExtractionError(
      'corrupt',
      'the EPUB has no package document (META-INF/container.xml names none that exists)',
    );
  }
  const baseDir = packagePath.includes('/') ? packagePath.slice(0, packagePath.lastIndexOf('/')) : '';
  const manifest = new Map<string, { href: string; type: string }>();
  const spine: string[] = [];
  readXml(
    opf,
    {
      open(name, attributes) {
        if (name === 'item' && attributes.id && attributes.href) {
          manifest.set(attributes.id, {
            href: resolvePart(baseDir, attributes.href),
            type: attributes['media-type'] ?? '',
          });
        } else if (name === 'itemref' && attributes.idref) {
          spine.push(attributes.idref);
        }
      },
    },
    `the EPUB part ${packagePath}`,
  );
  // Each chapter once, where the spine first lists it: a spine that lists one chapter thousands
  // of times would otherwise multiply a small file's text past any ratio the archive checks.
  const chapters = [
    ...new Set(
      spine
        .map((id) => manifest.get(id))
        .filter((item) => item !== undefined && CHAPTER_TYPES.has(item.type))
        .map((item) => item!.href.split('#')[0]!),
    ),
  ];
  refuseEncryptedChapters(parts.get('meta-inf/encryption.xml'), new Set(chapters));
  const texts: string[] = [];
  for (const chapter of chapters) {
    const xhtml = parts.get(chapter);
    if (!xhtml) continue;
    const text = markupText(new TextDecoder('utf-8').decode(xhtml), { headings: true });
    if (text !== '') texts.push(text);
  }
  return normalizeText(texts.join('\n\n')).trim();
}

/** Encrypted chapters (DRM) cannot be read; encrypted (obfuscated) fonts are of no interest. */
function refuseEncryptedChapters(encryption: Buffer | undefined, chapters: ReadonlySet<string>): void {
  if (!encryption) return;
  let encrypted = false;
  readXml(
    encryption,
    {
      open(name, attributes) {
        if (name === 'CipherReference' && attributes.URI && chapters.has(resolvePart('', attributes.URI))) {
          encrypted = true;
        }
      },
    },
    'the EPUB part META-INF/encryption.xml',
  );
  if (encrypted)
    throw new ExtractionError('encrypted', 'the EPUB is protected by DRM (its chapters are encrypted)');
}
