// The `s3` source type: a bucket (optionally a prefix of it) on AWS S3 or any S3-compatible
// server, through the AWS SDK v3. Items are objects, their change token the ETag; the listing is
// ListObjectsV2, page after page. The endpoint is an outbound target like a URL document's: every
// connection resolves its host once and connects only to addresses the URL-ingest rules allow.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { ERRORS } from '../../../domain/errors.js';
import type { ListedItem, SourceConnection, SourceType } from '../../../domain/sources.js';
import { type AddressPolicy, FetchError, guardedLookup } from '../../../pipeline/fetch/index.js';

export interface S3SourceConfig {
  bucket: string;
  prefix?: string;
  region?: string;
  endpoint?: string;
  force_path_style?: boolean;
}

const DEFAULT_REGION = 'us-east-1';
/** Objects per ListObjectsV2 page: S3's most. */
const PAGE_SIZE = 1000;

/** How long resolving the endpoint's host may take. */
const LOOKUP_TIMEOUT_MS = 10_000;

export function s3SourceType(options: { policy: AddressPolicy; pageSize?: number }): SourceType {
  return {
    name: 's3',
    prepare(raw) {
      const config = raw as unknown as S3SourceConfig & {
        access_key_id?: string;
        secret_access_key?: string;
      };
      const { access_key_id, secret_access_key, ...rest } = config;
      if ((access_key_id === undefined) !== (secret_access_key === undefined)) {
        throw ERRORS.invalid('Give both access_key_id and secret_access_key, or neither.', [
          {
            pointer: access_key_id === undefined ? '/config/access_key_id' : '/config/secret_access_key',
            message: 'required with the other credential',
          },
        ]);
      }
      if (rest.endpoint !== undefined) {
        let url: URL;
        try {
          url = new URL(rest.endpoint);
        } catch {
          throw ERRORS.invalid('config.endpoint is not a URL.', [
            { pointer: '/config/endpoint', message: 'an http or https URL' },
          ]);
        }
        if (url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
          throw ERRORS.invalid('config.endpoint is a scheme, host and port only.', [
            { pointer: '/config/endpoint', message: 'no path, query or fragment' },
          ]);
        }
      }
      const credentials =
        access_key_id !== undefined && secret_access_key !== undefined
          ? { access_key_id, secret_access_key }
          : null;
      return {
        config: { ...rest },
        credentials,
        urls: rest.endpoint === undefined ? [] : [{ url: rest.endpoint, pointer: '/config/endpoint' }],
      };
    },
    connect(raw, credentials) {
      const config = raw as unknown as S3SourceConfig;
      const endpoint = config.endpoint === undefined ? null : new URL(config.endpoint);
      const port = () => {
        if (endpoint === null) return 443;
        if (endpoint.port !== '') return Number(endpoint.port);
        return endpoint.protocol === 'http:' ? 80 : 443;
      };
      // A literal address never reaches `lookup`: judge it here, at each run.
      if (endpoint !== null) {
        const host = endpoint.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) !== 0 && !options.policy.isAllowed(host, port(), host)) {
          throw new FetchError('url_blocked', `${host} is not an allowed address`, false);
        }
      }
      // The URL-ingest rule at every connection: the host is resolved once and every answer
      // must pass, so a rebinding resolver cannot choose the address.
      const lookup = guardedLookup({ policy: options.policy, port: port(), timeoutMs: LOOKUP_TIMEOUT_MS });
      const clientConfig: S3ClientConfig = {
        region: config.region ?? DEFAULT_REGION,
        forcePathStyle: config.force_path_style ?? false,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        requestHandler: {
          httpAgent: new http.Agent({ keepAlive: true, lookup }),
          httpsAgent: new https.Agent({ keepAlive: true, lookup }),
        },
        // A source without credentials reads a public bucket unsigned: never with the server's
        // own identity (its environment or instance role), which is the operator's, not the org's.
        ...(credentials
          ? {
              credentials: {
                accessKeyId: credentials.access_key_id ?? '',
                secretAccessKey: credentials.secret_access_key ?? '',
              },
            }
          : { signer: { sign: async (request: never) => request } }),
      };
      if (endpoint !== null) clientConfig.endpoint = endpoint.origin;
      const client = new S3Client(clientConfig);
      return new S3Connection(client, config.bucket, config.prefix ?? '', options.pageSize ?? PAGE_SIZE);
    },
  };
}

class S3Connection implements SourceConnection {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    private readonly pageSize: number,
  ) {}

  async *list(signal: AbortSignal): AsyncIterable<ListedItem> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix === '' ? undefined : this.prefix,
          ContinuationToken: token,
          MaxKeys: this.pageSize,
        }),
        { abortSignal: signal },
      );
      for (const object of page.Contents ?? []) {
        // "Folders" made by consoles are empty objects whose key ends in '/': not documents.
        if (object.Key === undefined || object.Key.endsWith('/')) continue;
        yield {
          key: object.Key,
          etag: object.ETag ?? `${object.LastModified?.toISOString()}/${object.Size}`,
        };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async open(key: string, signal: AbortSignal): Promise<Readable> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      abortSignal: signal,
    });
    const body = answer.Body;
    if (body instanceof Readable) return body;
    if (body && typeof (body as { transformToWebStream?: unknown }).transformToWebStream === 'function') {
      return Readable.fromWeb(
        (body as { transformToWebStream(): ReadableStream }).transformToWebStream() as never,
      );
    }
    return Readable.from([]);
  }

  close(): void {
    this.client.destroy();
  }
}
