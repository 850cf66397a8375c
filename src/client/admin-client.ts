// AdminClient: the admin API (/admin/v1) with the server's ADMIN_TOKEN — organisations, their API
// keys and purges. Same transport as DocindexClient: retries on 429/503, problem+json answers as
// DocindexError (a wrong token is a 401, an unknown id a 404).

import { callApi, type Transport, transportOf } from './http-exchange.js';
import type { RequestOptions } from './options.js';
import type {
  AdminKey,
  AdminOrg,
  AdminOrgPage,
  CreatedOrg,
  IssuedKey,
  KeyScope,
  PurgeReceipt,
} from './types.js';

export interface AdminClientOptions {
  /** Where the API is, e.g. `http://127.0.0.1:8080` (without `/admin/v1`). */
  baseUrl: string;
  /** The server's ADMIN_TOKEN. */
  adminToken: string;
  fetch?: typeof globalThis.fetch;
  maxRetries?: number;
  maxRetryDelayMs?: number;
}

export interface CreateKeyOptions extends RequestOptions {
  /** Every scope when left out. */
  scopes?: KeyScope[];
  /** After this the key is refused (401); never when left out. */
  expiresAt?: Date | string;
  /** Limits the key to these partitions; every partition when left out. */
  partitions?: string[];
  /**
   * Binds the key to these principals (say, a user and their groups): its requests see only
   * documents without an access list or whose list names one of them. Unbound when left out.
   */
  principals?: string[];
}

export class AdminClient {
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: AdminClientOptions) {
    if (!options.adminToken) throw new TypeError('AdminClient needs an adminToken');
    this.#transport = transportOf({ ...options, token: options.adminToken });
    this.baseUrl = this.#transport.baseUrl;
  }

  /** A new organisation and its first key (every scope); the key is in this answer only. */
  createOrg(name: string, options: RequestOptions & { rateLimitRpm?: number } = {}): Promise<CreatedOrg> {
    return callApi<CreatedOrg>(this.#transport, 'POST', '/admin/v1/orgs', {
      json: { name, ...(options.rateLimitRpm === undefined ? {} : { rate_limit_rpm: options.rateLimitRpm }) },
      signal: options.signal,
    });
  }

  /** One page of organisations, newest first, each with its usage. */
  listOrgs(options: RequestOptions & { limit?: number; cursor?: string } = {}): Promise<AdminOrgPage> {
    return callApi<AdminOrgPage>(this.#transport, 'GET', '/admin/v1/orgs', {
      query: { limit: options.limit, cursor: options.cursor },
      signal: options.signal,
    });
  }

  /** Every organisation, newest first, following cursors page by page. */
  async *iterateOrgs(options: RequestOptions = {}): AsyncGenerator<AdminOrg, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listOrgs({
        limit: 100,
        ...(cursor === undefined ? {} : { cursor }),
        ...options,
      });
      yield* page.orgs;
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }

  getOrg(orgId: string, options: RequestOptions = {}): Promise<AdminOrg> {
    return callApi<AdminOrg>(this.#transport, 'GET', `/admin/v1/orgs/${encodeURIComponent(orgId)}`, options);
  }

  /** Renames the organisation and/or changes its rate limit. */
  updateOrg(
    orgId: string,
    changes: { name?: string; rateLimitRpm?: number },
    options: RequestOptions = {},
  ): Promise<AdminOrg> {
    return callApi<AdminOrg>(this.#transport, 'PATCH', `/admin/v1/orgs/${encodeURIComponent(orgId)}`, {
      json: {
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.rateLimitRpm === undefined ? {} : { rate_limit_rpm: changes.rateLimitRpm }),
      },
      signal: options.signal,
    });
  }

  /** Removes the organisation and everything it owns; cannot be undone. */
  purgeOrg(orgId: string, options: RequestOptions = {}): Promise<PurgeReceipt> {
    return callApi<PurgeReceipt>(
      this.#transport,
      'DELETE',
      `/admin/v1/orgs/${encodeURIComponent(orgId)}`,
      options,
    );
  }

  /** A new key of the organisation; the key is in this answer only. */
  createKey(orgId: string, options: CreateKeyOptions = {}): Promise<IssuedKey> {
    const expiresAt = options.expiresAt instanceof Date ? options.expiresAt.toISOString() : options.expiresAt;
    return callApi<IssuedKey>(this.#transport, 'POST', `/admin/v1/orgs/${encodeURIComponent(orgId)}/keys`, {
      json: {
        ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
        ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
        ...(options.partitions === undefined ? {} : { partitions: options.partitions }),
        ...(options.principals === undefined ? {} : { principals: options.principals }),
      },
      signal: options.signal,
    });
  }

  /** The organisation's keys (prefix, scopes, expiry and dates; never the key itself). */
  async listKeys(orgId: string, options: RequestOptions = {}): Promise<AdminKey[]> {
    const page = await callApi<{ keys: AdminKey[] }>(
      this.#transport,
      'GET',
      `/admin/v1/orgs/${encodeURIComponent(orgId)}/keys`,
      options,
    );
    return page.keys;
  }

  /** Revokes the key at once; resolves to the key as it is now. */
  revokeKey(keyId: string, options: RequestOptions = {}): Promise<AdminKey> {
    return callApi<AdminKey>(
      this.#transport,
      'DELETE',
      `/admin/v1/keys/${encodeURIComponent(keyId)}`,
      options,
    );
  }
}
