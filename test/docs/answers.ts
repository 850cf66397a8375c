// The answers the documentation shows after an example (`# → 202 {"status":"accepted",…}`), and
// whether a real answer has that shape.

export interface ShownAnswer {
  status: number;
  /** The JSON shown after the status, if any. */
  body?: unknown;
}

/** `# → 202 {...}` (the JSON optional); null for any other line. */
export function parseShownAnswer(line: string): ShownAnswer | null {
  const match = /^#\s*→\s*(\d{3})(?:\s+(.*))?$/.exec(line.trim());
  if (!match) return null;
  const json = match[2]?.trim();
  return json ? { status: Number(match[1]), body: JSON.parse(json) } : { status: Number(match[1]) };
}

/**
 * Where `actual` differs from the shape `shown`, as JSON pointers with a reason; empty when it
 * matches. The shape rules: every key shown must be there (more keys may be); a string with `…`
 * matches any string starting with what comes before the `…`, any other string only itself; a
 * number matches any number; `true`, `false` and `null` match only themselves; a non-empty list
 * matches a non-empty list whose first element matches the first element shown; `[]` any list.
 */
export function shapeMismatches(shown: unknown, actual: unknown, pointer = ''): string[] {
  const at = pointer || '/';
  if (typeof shown === 'string') {
    if (typeof actual !== 'string') return [`${at}: expected a string, got ${JSON.stringify(actual)}`];
    const cut = shown.indexOf('…');
    const ok = cut < 0 ? actual === shown : actual.startsWith(shown.slice(0, cut));
    return ok ? [] : [`${at}: expected ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
  }
  if (typeof shown === 'number') {
    return typeof actual === 'number' ? [] : [`${at}: expected a number, got ${JSON.stringify(actual)}`];
  }
  if (shown === null || typeof shown === 'boolean') {
    return actual === shown
      ? []
      : [`${at}: expected ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${at}: expected a list, got ${JSON.stringify(actual)}`];
    if (shown.length === 0) return [];
    if (actual.length === 0) return [`${at}: expected at least one element, got []`];
    return shapeMismatches(shown[0], actual[0], `${pointer}/0`);
  }
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) {
    return [`${at}: expected an object, got ${JSON.stringify(actual)}`];
  }
  return Object.entries(shown as Record<string, unknown>).flatMap(([key, value]) =>
    key in actual
      ? shapeMismatches(value, (actual as Record<string, unknown>)[key], `${pointer}/${key}`)
      : [`${pointer}/${key}: missing`],
  );
}
