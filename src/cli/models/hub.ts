// What `docindex models pull` asks of a Hugging Face Hub (HF_ENDPOINT): a model's files at a
// revision, with the commit the revision resolves to and each file's size and hash
// (`GET /api/models/{repo}/revision/{rev}?blobs=true`), and a file's bytes, whole or from an
// offset (`GET /{repo}/resolve/{commit}/{path}` with `Range`). The Hub answers a large file's
// download with a redirect to its CDN; redirects are followed here, and the token is sent to the
// Hub's own origin only, never to another host. Failures become one-line ModelPullErrors, told
// apart by the Hub's `X-Error-Code` header where it sends one.
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { ModelPullError } from './errors.js';

/** Time to wait for a connection, for an answer's headers, and between two pieces of a body. */
const CONNECT_TIMEOUT_MS = 30_000;
const HEADERS_TIMEOUT_MS = 60_000;
const BODY_TIMEOUT_MS = 60_000;
const MAX_REDIRECTS = 5;

export interface HubFile {
  /** The file's path in the repository (`onnx/model.onnx`). */
  path: string;
  /** Bytes; null when the Hub does not say. */
  size: number | null;
  /** Hex SHA-256 of the content, which the Hub lists for files kept in LFS/Xet storage. */
  sha256: string | null;
  /** Hex git blob id (SHA-1 of `blob <size>\0` + content), which the Hub lists for the other files. */
  gitBlobId: string | null;
}

export interface HubModel {
  repo: string;
  revision: string;
  /** The commit the revision resolves to: every file is downloaded from it. */
  commit: string;
  files: HubFile[];
}

/** A file's body as the Hub (or its CDN) sends it. */
export interface HubDownload {
  /** Where the body starts in the file: the offset asked for, or 0 when the server sent it all. */
  start: number;
  /** The whole file's length when the answer says it; null otherwise. */
  total: number | null;
  body: Readable;
  /** The host that sent the body (the CDN's, after a redirect). */
  host: string;
}

export class HubClient {
  private readonly endpoint: URL;
  private readonly dispatcher = new Agent({
    connect: { timeout: CONNECT_TIMEOUT_MS },
    headersTimeout: HEADERS_TIMEOUT_MS,
    bodyTimeout: BODY_TIMEOUT_MS,
  });

  constructor(
    endpoint: string,
    private readonly token: string,
  ) {
    this.endpoint = new URL(endpoint.endsWith('/') ? endpoint : `${endpoint}/`);
  }

  /** The endpoint as the user set it, for messages. */
  get origin(): string {
    return this.endpoint.href.replace(/\/$/, '');
  }

  async model(repo: string, revision: string): Promise<HubModel> {
    const url = new URL(`api/models/${repo}/revision/${encodeURIComponent(revision)}`, this.endpoint);
    url.searchParams.set('blobs', 'true');
    const answer = await this.get(url, {}, `the file list of ${repo}@${revision}`);
    if (answer.statusCode !== 200) {
      await answer.body.dump();
      throw failureOf(answer, { repo, revision, endpoint: this.origin, tokenSet: this.token !== '' });
    }
    let info: unknown;
    try {
      info = await answer.body.json();
    } catch (error) {
      if (error instanceof SyntaxError) {
        throw new ModelPullError(
          'hub',
          `${answer.host} answered the file list of ${repo}@${revision} with something that is not JSON`,
        );
      }
      throw networkFailure(error, answer.host, `the file list of ${repo}@${revision}`);
    }
    return modelOf(info, repo, revision, this.origin);
  }

  /** A file of the model at `commit`, from byte `offset` when it is above 0 (a `Range` request). */
  async download(repo: string, commit: string, file: string, offset: number): Promise<HubDownload> {
    const path = file.split('/').map(encodeURIComponent).join('/');
    const url = new URL(`${repo}/resolve/${commit}/${path}`, this.endpoint);
    const answer = await this.get(
      url,
      offset > 0 ? { range: `bytes=${offset}-` } : {},
      file,
      'run the same command again to resume',
    );
    if (answer.statusCode === 206) {
      const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(String(answer.headers['content-range'] ?? ''));
      if (range && Number(range[1]) === offset) {
        return {
          start: offset,
          total: range[2] === '*' ? null : Number(range[2]),
          body: answer.body,
          host: answer.host,
        };
      }
      // A range other than the one asked for: ask again for the whole file.
      await answer.body.dump();
      return this.download(repo, commit, file, 0);
    }
    if (answer.statusCode === 200) {
      const length = Number(answer.headers['content-length']);
      return {
        start: 0,
        total: Number.isSafeInteger(length) && length >= 0 ? length : null,
        body: answer.body,
        host: answer.host,
      };
    }
    await answer.body.dump();
    // 416: the partial file is not a prefix the server can continue; start over.
    if (answer.statusCode === 416 && offset > 0) return this.download(repo, commit, file, 0);
    throw failureOf(answer, {
      repo,
      revision: commit,
      file,
      endpoint: this.origin,
      tokenSet: this.token !== '',
    });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** GET `url`, following redirects; the token goes to the endpoint's origin only. */
  private async get(url: URL, headers: Record<string, string>, what: string, advice?: string) {
    let current = url;
    for (let hop = 0; ; hop++) {
      const sameOrigin = current.origin === this.endpoint.origin;
      let answer: Awaited<ReturnType<typeof request>>;
      try {
        answer = await request(current, {
          method: 'GET',
          dispatcher: this.dispatcher,
          headers: {
            ...headers,
            'user-agent': 'docindex',
            ...(sameOrigin && this.token !== '' ? { authorization: `Bearer ${this.token}` } : {}),
          },
        });
      } catch (error) {
        throw networkFailure(error, current.host, what, advice);
      }
      const location = answer.headers.location;
      if (answer.statusCode >= 300 && answer.statusCode < 400 && typeof location === 'string') {
        await answer.body.dump();
        if (hop >= MAX_REDIRECTS) {
          throw new ModelPullError('hub', `more than ${MAX_REDIRECTS} redirects from ${url.host}`);
        }
        current = new URL(location, current);
        if (current.protocol !== 'https:' && current.protocol !== 'http:') {
          throw new ModelPullError('hub', `${url.host} redirected to a ${current.protocol} URL`);
        }
        continue;
      }
      return Object.assign(answer, { host: current.host });
    }
  }
}

const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'unknown host',
  EAI_AGAIN: 'name lookup failed',
  ETIMEDOUT: 'timed out',
  UND_ERR_SOCKET: 'connection closed early',
  UND_ERR_CONNECT_TIMEOUT: `no connection within ${CONNECT_TIMEOUT_MS / 1000} s`,
  UND_ERR_HEADERS_TIMEOUT: `no answer within ${HEADERS_TIMEOUT_MS / 1000} s`,
  UND_ERR_BODY_TIMEOUT: `no data for ${BODY_TIMEOUT_MS / 1000} s`,
};

/**
 * An error of the connection (refused, reset, timed out) while fetching `what`, as the one line
 * the user reads, with `advice` after it.
 */
export function networkFailure(error: unknown, host: string, what: string, advice?: string): ModelPullError {
  const code =
    error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : null;
  const cause =
    code === null
      ? error instanceof Error
        ? error.message
        : String(error)
      : NETWORK_CODES[code]
        ? `${NETWORK_CODES[code]}, ${code}`
        : code;
  return new ModelPullError(
    'network',
    `network failure with ${host} during ${what} (${cause})${advice ? `: ${advice}` : ''}`,
  );
}

interface FailureContext {
  repo: string;
  revision: string;
  file?: string;
  endpoint: string;
  tokenSet: boolean;
}

/** A Hub answer that is not the file or the list, as the one line the user reads. */
function failureOf(
  answer: { statusCode: number; headers: Record<string, string | string[] | undefined>; host: string },
  about: FailureContext,
): ModelPullError {
  const status = answer.statusCode;
  const code = header(answer.headers, 'x-error-code');
  const hubMessage = header(answer.headers, 'x-error-message');
  const page = `${about.endpoint}/${about.repo}`;
  if (code === 'GatedRepo') {
    return new ModelPullError(
      'unauthorized',
      about.tokenSet
        ? `${about.repo} is gated and HF_TOKEN's account has no access yet: ask for it on ${page} (${status})`
        : `${about.repo} is gated: ask for access on ${page}, then set HF_TOKEN to a token of that account (${status})`,
    );
  }
  if (status === 401 && about.tokenSet && code !== 'RepoNotFound') {
    return new ModelPullError(
      'unauthorized',
      `${about.endpoint} refused HF_TOKEN (401${hubMessage ? `: ${hubMessage}` : ''}): check the token`,
    );
  }
  // The Hub answers 401 rather than 404 for a repository it will not name without a token.
  if (code === 'RepoNotFound' || (status === 401 && code === null)) {
    return new ModelPullError(
      'not_found',
      `no model ${about.repo} on ${about.endpoint} (${status})${about.tokenSet ? '' : '; a private model needs HF_TOKEN'}`,
    );
  }
  if (code === 'RevisionNotFound') {
    return new ModelPullError('not_found', `${about.repo} has no revision ${about.revision} (${status})`);
  }
  if (status === 404 || code === 'EntryNotFound') {
    return new ModelPullError(
      'not_found',
      about.file === undefined
        ? `no model ${about.repo} at revision ${about.revision} on ${about.endpoint} (${status})`
        : `${about.repo} has no file ${about.file} at ${about.revision} (${status})`,
    );
  }
  if (status === 403) {
    return new ModelPullError(
      'unauthorized',
      `${answer.host} refused access to ${about.repo}${about.file ? `/${about.file}` : ''} (403${hubMessage ? `: ${hubMessage}` : ''})`,
    );
  }
  if (status === 429 || status >= 500) {
    return new ModelPullError(
      'hub',
      `${answer.host} answered ${status}${status === 429 ? ' (too many requests)' : ''}: try again later; the pull resumes where it stopped`,
    );
  }
  return new ModelPullError(
    'hub',
    `${answer.host} answered ${status} for ${about.file ?? 'the file list'} of ${about.repo}`,
  );
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

const SHA256 = /^[0-9a-f]{64}$/;
const GIT_OID = /^[0-9a-f]{40}$/;

/** The Hub's model info, checked field by field: a mirror that answers something else is named. */
function modelOf(info: unknown, repo: string, revision: string, endpoint: string): HubModel {
  const unreadable = (what: string) =>
    new ModelPullError('hub', `${endpoint} answered a file list for ${repo}@${revision} without ${what}`);
  if (typeof info !== 'object' || info === null) throw unreadable('a JSON object');
  const { sha, siblings } = info as { sha?: unknown; siblings?: unknown };
  if (typeof sha !== 'string' || !GIT_OID.test(sha)) throw unreadable('its commit (`sha`)');
  if (!Array.isArray(siblings)) throw unreadable('its files (`siblings`)');
  const files: HubFile[] = [];
  for (const sibling of siblings as unknown[]) {
    if (typeof sibling !== 'object' || sibling === null) continue;
    const { rfilename, size, blobId, lfs } = sibling as Record<string, unknown>;
    if (typeof rfilename !== 'string') continue;
    const lfsInfo = typeof lfs === 'object' && lfs !== null ? (lfs as Record<string, unknown>) : null;
    const sha256 = typeof lfsInfo?.sha256 === 'string' && SHA256.test(lfsInfo.sha256) ? lfsInfo.sha256 : null;
    const bytes = typeof size === 'number' ? size : typeof lfsInfo?.size === 'number' ? lfsInfo.size : null;
    files.push({
      path: rfilename,
      size: bytes !== null && Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : null,
      sha256,
      // An LFS file's blob id names its pointer, not its content.
      gitBlobId: lfsInfo === null && typeof blobId === 'string' && GIT_OID.test(blobId) ? blobId : null,
    });
  }
  return { repo, revision, commit: sha, files };
}
