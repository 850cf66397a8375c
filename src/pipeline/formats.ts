// Media types of the formats docindex extracts, as shown in a document's `source.content_type`.

export type Format = 'pdf' | 'docx' | 'txt' | 'md' | 'html';

const CONTENT_TYPES: Record<Format, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  txt: 'text/plain',
  md: 'text/markdown',
  html: 'text/html',
};

export function contentTypeOf(format: Format): string {
  return CONTENT_TYPES[format];
}

export function formatOf(contentType: string | null): Format | null {
  if (contentType === null) return null;
  const base = contentType.split(';')[0]!.trim().toLowerCase();
  for (const [format, type] of Object.entries(CONTENT_TYPES)) if (type === base) return format as Format;
  return null;
}
