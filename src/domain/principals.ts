// Access lists and principals. A document may carry an access list (`access`: the principals
// that may see it, e.g. `group:eng`, `user:42`); a request may act for principals (`principals`),
// given by the caller or bound to its API key. A request with principals sees only documents
// without an access list or whose list shares one of its principals; a request without them (and
// an unbound key) is not restricted by access lists. The limits here are those of a document's
// and a source's `access` and of a request's or a key's `principals`.
import { ERRORS } from './errors.js';

/** Most principals in one access list, request or key. */
export const ACCESS_MAX_PRINCIPALS = 64;
/** Longest principal, in characters. */
export const PRINCIPAL_MAX_LENGTH = 128;

/** Whether a document with this access list may be seen by a request acting for `principals`. */
export function accessAllows(
  access: readonly string[] | null,
  principals: readonly string[] | null,
): boolean {
  if (principals === null || access === null) return true;
  return access.some((p) => principals.includes(p));
}

/**
 * Checks a list of principals (`at least`: 1 for an access list, 0 for a request's principals)
 * and returns it without repeats, in the given order; 400 pointing at `pointer` otherwise.
 */
export function checkPrincipals(list: readonly unknown[], pointer: string, atLeast: 0 | 1): string[] {
  if (list.length < atLeast) {
    throw ERRORS.invalid('An access list names at least one principal; send null to remove it.', [
      { pointer, message: 'must NOT have fewer than 1 items' },
    ]);
  }
  if (list.length > ACCESS_MAX_PRINCIPALS) {
    throw ERRORS.invalid(`At most ${ACCESS_MAX_PRINCIPALS} principals.`, [
      { pointer, message: `must NOT have more than ${ACCESS_MAX_PRINCIPALS} items` },
    ]);
  }
  list.forEach((principal, i) => {
    if (typeof principal !== 'string' || principal === '' || principal.length > PRINCIPAL_MAX_LENGTH) {
      throw ERRORS.invalid(`A principal is a string of 1 to ${PRINCIPAL_MAX_LENGTH} characters.`, [
        { pointer: `${pointer}/${i}`, message: `must be 1 to ${PRINCIPAL_MAX_LENGTH} characters` },
      ]);
    }
  });
  return [...new Set(list as string[])];
}

/** A document's access list as given: absent stays absent, null removes it, a list is checked. */
export function accessToWrite(
  access: readonly unknown[] | null | undefined,
  pointer: string,
): string[] | null | undefined {
  if (access === undefined || access === null) return access;
  return checkPrincipals(access, pointer, 1);
}

/**
 * `principals=a,b` of a GET route: comma-separated names; an empty value is the empty list (the
 * request then sees only documents without an access list).
 */
export function parsePrincipalsParam(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return checkPrincipals(names, '/query/principals', 0);
}

/**
 * The principals a request acts for: those it names (`requested`, each of which a bound key must
 * hold: 403 principal_forbidden), else its key's; null: not restricted by access lists.
 */
export function principalsToRead(
  bound: readonly string[] | null,
  requested: readonly unknown[] | null | undefined,
  pointer: string,
): string[] | null {
  if (requested === undefined || requested === null) return bound === null ? null : [...bound];
  const names = checkPrincipals(requested, pointer, 0);
  if (bound !== null) {
    const foreign = names.find((name) => !bound.includes(name));
    if (foreign !== undefined) throw ERRORS.principalForbidden(foreign);
  }
  return names;
}
