// The errors the client throws: every failed API call becomes a DocindexError carrying the
// server's problem+json fields; waiting for documents past a deadline is a WaitTimeoutError.
import type { DocindexErrorCode, DocumentRecord, FieldError, Problem } from './types.js';

export class DocindexError extends Error {
  /** HTTP status; 0 when no answer arrived (network failure). */
  readonly status: number;
  readonly code: DocindexErrorCode;
  readonly title: string;
  readonly detail: string;
  /** Per-field validation problems (JSON Pointers into the request). */
  readonly errors: FieldError[];
  /** The server's request id, to quote when reporting a problem. */
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429, 503), if it said. */
  readonly retryAfterSeconds: number | null;

  constructor(fields: {
    status: number;
    code: DocindexErrorCode;
    title: string;
    detail: string;
    errors?: FieldError[];
    requestId?: string | null;
    retryAfterSeconds?: number | null;
    cause?: unknown;
  }) {
    super(
      `${fields.status ? `${fields.status} ` : ''}${fields.code}: ${fields.detail}`,
      fields.cause === undefined ? undefined : { cause: fields.cause },
    );
    this.name = 'DocindexError';
    this.status = fields.status;
    this.code = fields.code;
    this.title = fields.title;
    this.detail = fields.detail;
    this.errors = fields.errors ?? [];
    this.requestId = fields.requestId ?? null;
    this.retryAfterSeconds = fields.retryAfterSeconds ?? null;
  }

  /** Reads an error response: problem+json when the server sent it, a generic error otherwise. */
  static async fromResponse(response: Response, retryAfterSeconds: number | null): Promise<DocindexError> {
    const text = await response.text().catch(() => '');
    const problem = parseProblem(text);
    if (problem) {
      return new DocindexError({
        status: response.status,
        code: problem.code,
        title: problem.title,
        detail: problem.detail,
        errors: problem.errors ?? [],
        requestId: problem.request_id,
        retryAfterSeconds,
      });
    }
    return new DocindexError({
      status: response.status,
      code: 'invalid_response',
      title: response.statusText || 'Unexpected response',
      detail: `The server answered ${response.status} without a problem+json body${text ? `: ${text.slice(0, 200)}` : '.'}`,
      requestId: response.headers.get('x-request-id'),
      retryAfterSeconds,
    });
  }

  static network(cause: unknown, url: string): DocindexError {
    const reason = cause instanceof Error ? describeNetworkError(cause) : String(cause);
    return new DocindexError({
      status: 0,
      code: 'network_error',
      title: 'Network error',
      detail: `Could not reach ${url}: ${reason}`,
      cause,
    });
  }
}

/** waitForDocuments gave up before every document was ready or failed. */
export class WaitTimeoutError extends Error {
  constructor(
    readonly pending: string[],
    /** The last status seen of every document found. */
    readonly documents: DocumentRecord[],
    timeoutMs: number,
  ) {
    super(`${pending.length} document(s) still pending after ${timeoutMs} ms: ${pending.join(', ')}`);
    this.name = 'WaitTimeoutError';
  }
}

function parseProblem(text: string): Problem | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const candidate = value as Partial<Problem>;
  if (typeof candidate.code !== 'string' || typeof candidate.detail !== 'string') return null;
  return {
    type: String(candidate.type ?? ''),
    title: String(candidate.title ?? ''),
    status: Number(candidate.status ?? 0),
    detail: candidate.detail,
    code: candidate.code,
    ...(Array.isArray(candidate.errors) ? { errors: candidate.errors } : {}),
    request_id: String(candidate.request_id ?? ''),
  };
}

// undici reports "fetch failed" with the useful part (ECONNREFUSED…) in `cause`.
function describeNetworkError(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}
