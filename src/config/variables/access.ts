// The variables of access: the rate limits, the admin API's token and the keys that seal
// credentials at rest.
import type { VariableTable } from '../variable.js';

/** The rate limits of organisations and of requests without a valid key. */
export const RATE_LIMIT_VARIABLES = {
  defaultRateLimitRpm: {
    env: 'DEFAULT_RATE_LIMIT_RPM',
    type: 'int',
    default: 600,
    min: 1,
    max: 10_000_000,
    description: 'rate limit of new organisations',
  },
  unauthenticatedRateLimitRpm: {
    env: 'UNAUTHENTICATED_RATE_LIMIT_RPM',
    type: 'int',
    default: 120,
    min: 1,
    max: 10_000_000,
    description: 'limit per client address for requests without a valid key',
  },
} satisfies Partial<VariableTable>;

/** The admin API's token and the keys that seal credentials at rest. */
export const ADMIN_VARIABLES = {
  adminToken: {
    env: 'ADMIN_TOKEN',
    type: 'string',
    default: '',
    defaultText: '— (admin API off)',
    pattern: {
      test: /^(?:[!-~]{32,512})?$/,
      invalid:
        'ADMIN_TOKEN must be 32 to 512 printable ASCII characters without spaces (e.g. `openssl rand -hex 32`)',
    },
    description:
      'turns on the admin API under `/admin/v1` (orgs, keys, purge), for requests that send `Authorization: Bearer <ADMIN_TOKEN>`; unset, those routes do not exist (404)',
  },
  secretsKey: {
    env: 'SECRETS_KEY',
    type: 'string',
    default: '',
    defaultText: '— (credentials refused)',
    pattern: {
      test: /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)?$/,
      invalid:
        'SECRETS_KEY must be 32 bytes written as 64 hex digits or as base64 (e.g. `openssl rand -hex 32`)',
    },
    description:
      'encrypts credentials at rest (a source’s `secret_access_key`, AES-256-GCM); unset, a source with credentials is refused with 400 `secrets_key_unset`. docs/SOURCES.md says how to rotate it',
  },
  secretsKeyPrevious: {
    env: 'SECRETS_KEY_PREVIOUS',
    type: 'string',
    default: '',
    defaultText: '—',
    pattern: {
      test: /^(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)?$/,
      invalid: 'SECRETS_KEY_PREVIOUS must be 32 bytes written as 64 hex digits or as base64',
    },
    description:
      'the key before a rotation of `SECRETS_KEY`: credentials sealed under it still open, and are sealed again under `SECRETS_KEY` when their source next runs',
  },
} satisfies Partial<VariableTable>;
