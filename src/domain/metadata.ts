// A document's metadata: its type, its limits (the HTTP schemas read them too), the clean-up every
// store relies on and the merge a PATCH does.
import { ERRORS } from './errors.js';
import { cleanText } from './text.js';

/** A document's metadata: flat string keys to string values. */
export type Metadata = Record<string, string>;

export const METADATA_MAX_KEYS = 64;
export const METADATA_MAX_KEY_LENGTH = 128;
export const METADATA_MAX_VALUE_LENGTH = 2048;

/** Metadata as every store receives it: keys and values cleaned by `cleanText`. */
export function cleanMetadata(metadata: Metadata): Metadata {
  // A null-prototype object: keys such as `__proto__` stay plain data.
  const out: Metadata = Object.create(null);
  for (const [key, value] of Object.entries(metadata)) out[cleanText(key)] = cleanText(value);
  return out;
}

/** A metadata change: a string sets the key, null removes it; keys not named stay as they are. */
export type MetadataPatch = Record<string, string | null>;

/**
 * `current` with `patch` applied (RFC 7396 merge patch on a flat object). Refused (400, pointing
 * at /metadata) when the result would hold more than METADATA_MAX_KEYS keys.
 */
export function mergeMetadata(current: Metadata, patch: MetadataPatch): Metadata {
  // A null-prototype object: keys such as `__proto__` stay plain data.
  const merged: Metadata = Object.assign(Object.create(null), current);
  for (const [rawKey, value] of Object.entries(patch)) {
    const key = cleanText(rawKey);
    if (value === null) delete merged[key];
    else merged[key] = cleanText(value);
  }
  const keys = Object.keys(merged).length;
  if (keys > METADATA_MAX_KEYS) {
    const detail = `The document would have ${keys} metadata keys; at most ${METADATA_MAX_KEYS} are allowed.`;
    throw ERRORS.invalid(detail, [
      { pointer: '/metadata', message: `at most ${METADATA_MAX_KEYS} keys after the merge` },
    ]);
  }
  return merged;
}
