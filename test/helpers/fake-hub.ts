// A Hugging Face Hub on 127.0.0.1 for `docindex models pull` tests: the model-info endpoint
// (`/api/models/{repo}/revision/{rev}?blobs=true`, with sizes, git blob ids and LFS SHA-256s) and
// the file endpoint (`/{repo}/resolve/{rev}/{path}`), which answers small files itself and
// redirects LFS files to a second server on another port, the CDN, as the real Hub does. Both
// honour `Range`. A test can make a repository gated behind a token, cut a download's connection
// after some bytes, serve a corrupted file, or make the CDN ignore `Range`; every request is
// recorded with its Range and Authorization headers. An unknown repository is a 401 without a
// token and a 404 with one, as on the Hub.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRepo {
  /** 40 hex digits: what every revision of the repository resolves to unless `revisions` says. */
  commit: string;
  /** Path in the repository → content. */
  files: Record<string, Buffer | string>;
  /** Other revision names (branches, tags) → commit; `main` is always `commit`. */
  revisions?: Record<string, string>;
  /** File downloads need `Authorization: Bearer <gatedToken>` (the file list stays public, as on the Hub). */
  gatedToken?: string;
}

export interface RecordedRequest {
  server: 'hub' | 'cdn';
  path: string;
  range: string | null;
  authorization: string | null;
}

export interface FakeHub {
  /** HF_ENDPOINT for the tests. */
  url: string;
  repos: Map<string, FakeRepo>;
  requests: RecordedRequest[];
  /** The next download of `file` (a repository path) sends `bytes` bytes of its body, then drops the connection. */
  cutNext(file: string, bytes: number): void;
  /** Files served with one byte flipped, while their listing keeps the true size and hash. */
  corrupted: Set<string>;
  /** The CDN answers every Range request with the whole file (200). */
  ignoreRange: boolean;
  close(): Promise<void>;
}

/** Files kept in LFS: redirected to the CDN and listed with their SHA-256. */
const isLfs = (file: string) => file.endsWith('.onnx');

export async function startFakeHub(): Promise<FakeHub> {
  const repos = new Map<string, FakeRepo>();
  const requests: RecordedRequest[] = [];
  const cuts = new Map<string, number>();
  const corrupted = new Set<string>();
  const hub: FakeHub = {
    url: '',
    repos,
    requests,
    corrupted,
    ignoreRange: false,
    cutNext: (file, bytes) => cuts.set(file, bytes),
    close: async () => {
      await Promise.all([stop(hubServer), stop(cdnServer)]);
    },
  };

  const record = (server: 'hub' | 'cdn', req: IncomingMessage) =>
    requests.push({
      server,
      path: req.url ?? '',
      range: req.headers.range ?? null,
      authorization: req.headers.authorization ?? null,
    });

  /** The bytes a client receives for `file`: corrupted ones have their middle byte flipped. */
  const served = (file: string, content: Buffer) => {
    if (!corrupted.has(file)) return content;
    const copy = Buffer.from(content);
    const middle = Math.floor(copy.length / 2);
    copy[middle] = copy[middle]! ^ 0xff;
    return copy;
  };

  const sendFile = (
    req: IncomingMessage,
    res: ServerResponse,
    file: string,
    content: Buffer,
    honourRange: boolean,
  ) => {
    const body = served(file, content);
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    let start = 0;
    if (range && honourRange) {
      start = Number(range[1]);
      if (start >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
      res.writeHead(206, {
        'content-type': 'application/octet-stream',
        'content-length': body.length - start,
        'content-range': `bytes ${start}-${body.length - 1}/${body.length}`,
        'accept-ranges': 'bytes',
      });
    } else {
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': body.length,
        'accept-ranges': 'bytes',
      });
    }
    const part = body.subarray(start);
    const cut = cuts.get(file);
    if (cut !== undefined) {
      cuts.delete(file);
      // Headers promise the whole body; the connection drops once `cut` bytes are on their way.
      res.write(part.subarray(0, cut), () => res.socket?.destroy());
      return;
    }
    res.end(part);
  };

  const cdnServer = createServer((req, res) => {
    record('cdn', req);
    const match = /^\/blobs\/([0-9a-f]{64})\?/.exec(req.url ?? '');
    const found = match ? findBlob(repos, match[1]!) : null;
    if (!found) {
      res.writeHead(403).end('expired or unknown signature');
      return;
    }
    sendFile(req, res, found.file, found.content, !hub.ignoreRange);
  });

  const hubServer = createServer((req, res) => {
    record('hub', req);
    const url = new URL(req.url ?? '/', 'http://hub.test');
    const problem = (status: number, code: string, message: string) =>
      res
        .writeHead(status, {
          'content-type': 'application/json',
          'x-error-code': code,
          'x-error-message': message,
        })
        .end(JSON.stringify({ error: message }));

    const api = /^\/api\/models\/(.+)\/revision\/([^/]+)$/.exec(url.pathname);
    if (api) {
      const repo = repos.get(api[1]!);
      // As the Hub: without a token, a repository it will not show is a 401, not a 404.
      if (!repo)
        return problem(req.headers.authorization ? 404 : 401, 'RepoNotFound', 'Repository not found');
      const commit = commitOf(repo, decodeURIComponent(api[2]!));
      if (!commit) return problem(404, 'RevisionNotFound', 'Invalid rev id');
      const blobs = url.searchParams.get('blobs') === 'true';
      const siblings = Object.entries(repo.files).map(([file, content]) => {
        const bytes = Buffer.from(content);
        if (!blobs) return { rfilename: file };
        if (!isLfs(file)) return { rfilename: file, blobId: gitBlobId(bytes), size: bytes.length };
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256}\nsize ${bytes.length}\n`;
        return {
          rfilename: file,
          blobId: gitBlobId(Buffer.from(pointer)),
          size: bytes.length,
          lfs: { sha256, size: bytes.length, pointerSize: pointer.length },
        };
      });
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: api[1], modelId: api[1], sha: commit, private: false, siblings }));
      return;
    }

    const resolve = /^\/(.+?)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (resolve) {
      const [, repoId, revision, encodedFile] = resolve as unknown as [string, string, string, string];
      const repo = repos.get(repoId);
      if (!repo) return problem(404, 'RepoNotFound', 'Repository not found');
      const commit = commitOf(repo, decodeURIComponent(revision));
      if (!commit) return problem(404, 'RevisionNotFound', 'Invalid rev id');
      if (repo.gatedToken !== undefined) {
        const auth = req.headers.authorization;
        if (auth === undefined) return problem(401, 'GatedRepo', 'Access to this model is restricted');
        if (auth !== `Bearer ${repo.gatedToken}`) {
          return problem(403, 'GatedRepo', 'You are not in the authorized list');
        }
      }
      const file = encodedFile.split('/').map(decodeURIComponent).join('/');
      const content = repo.files[file];
      if (content === undefined) return problem(404, 'EntryNotFound', 'Entry not found');
      const bytes = Buffer.from(content);
      if (isLfs(file)) {
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const cdn = `http://127.0.0.1:${(cdnServer.address() as AddressInfo).port}`;
        res
          .writeHead(302, {
            location: `${cdn}/blobs/${sha256}?X-Amz-Signature=fake&response-content-disposition=inline`,
            'x-repo-commit': commit,
            'x-linked-size': String(bytes.length),
          })
          .end();
        return;
      }
      res.setHeader('x-repo-commit', commit);
      sendFile(req, res, file, bytes, true);
      return;
    }
    res.writeHead(404).end();
  });

  await Promise.all([listen(hubServer), listen(cdnServer)]);
  hub.url = `http://127.0.0.1:${(hubServer.address() as AddressInfo).port}`;
  return hub;
}

function commitOf(repo: FakeRepo, revision: string): string | null {
  if (revision === 'main' || revision === repo.commit) return repo.commit;
  const named = repo.revisions?.[revision];
  if (named) return named;
  return Object.values(repo.revisions ?? {}).includes(revision) ? revision : null;
}

function findBlob(repos: Map<string, FakeRepo>, sha256: string): { file: string; content: Buffer } | null {
  for (const repo of repos.values()) {
    for (const [file, content] of Object.entries(repo.files)) {
      const bytes = Buffer.from(content);
      if (createHash('sha256').update(bytes).digest('hex') === sha256) return { file, content: bytes };
    }
  }
  return null;
}

export function gitBlobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
