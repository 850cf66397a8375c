// The command line's dispatch and exit codes, with a fake server side: what a user sees for help,
// a wrong command or flag, an invalid environment, and an unknown organisation or key.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ServerSide } from '../../src/cli/admin-commands.js';
import { runCommandLine, USAGE } from '../../src/cli/main.js';
import type { ModelSettings } from '../../src/cli/models-command.js';
import type { AdminKey } from '../../src/client/types.js';
import { ConfigError } from '../../src/config/index.js';
import { ApiError } from '../../src/domain/errors.js';

function terminal() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = (stream: PassThrough) => () => (stream.read() ?? '').toString();
  return { io: { stdout, stderr }, out: text(stdout), err: text(stderr) };
}

const ORGS = [
  {
    org_id: 'org_1',
    name: 'Acme',
    rate_limit_rpm: 600,
    created_at: '2026-01-05T09:30:00.000Z',
    usage: { period_days: 30, total_queries: 1284 },
    active_keys: 1,
  },
  {
    org_id: 'org_2',
    name: 'Globex Research',
    rate_limit_rpm: 60,
    created_at: '2026-01-04T08:00:00.000Z',
    usage: { period_days: 30, total_queries: 0 },
    active_keys: 0,
  },
];

const KEYS: AdminKey[] = [
  {
    key_id: 'key_1',
    org_id: 'org_1',
    prefix: 'dix_AbCdEfGh',
    scopes: ['query', 'read'],
    expires_at: '2099-01-01T00:00:00.000Z',
    partitions: null,
    principals: null,
    created_at: '2026-01-05T09:30:00.000Z',
    revoked_at: null,
  },
  {
    key_id: 'key_2',
    org_id: 'org_1',
    prefix: 'dix_ZyXwVuTs',
    scopes: ['ingest', 'query', 'read', 'write', 'webhooks'],
    expires_at: null,
    partitions: null,
    principals: null,
    created_at: '2026-01-06T10:00:00.000Z',
    revoked_at: '2026-02-01T00:00:00.000Z',
  },
];

function fakeServer(calls: string[] = []): ServerSide {
  const issued = { org_id: 'org_1', key_id: 'key_1', api_key: 'dix_secret' };
  return {
    serve: async ({ worker }) => {
      calls.push(`serve worker=${worker}`);
      return 0;
    },
    worker: async () => 0,
    reindexVectors: async () => {
      calls.push('reindex vectors');
      return { documents: 3, provider: 'openai', model: 'text-embedding-3-small' };
    },
    reindex: async (onProgress) => {
      calls.push('reindex');
      onProgress({ rewritten: 20_000 });
      return {
        before: { configured: 'languages', written: 'none', reindexNeeded: true },
        rewritten: 20_000,
        done: true,
      };
    },
    migrate: async () => {
      calls.push('migrate');
    },
    openAdmin: async () => {
      calls.push('open');
      return {
        admin: {
          createOrg: async () => issued,
          issueKey: async () => issued,
          setRateLimit: async () => false,
          revokeKey: async () => false,
          async *everyOrg() {
            yield* ORGS;
          },
          keysOf: async (orgId: string) => {
            if (orgId !== 'org_1') throw new ApiError('not_found', `no organisation with id ${orgId}`);
            return KEYS;
          },
        },
        close: async () => {
          calls.push('close');
        },
      };
    },
  };
}

async function run(
  argv: string[],
  openServer: () => Promise<ServerSide> = async () => fakeServer(),
  modelSettings: () => ModelSettings = () => {
    throw new Error('the models commands must not read the configuration here');
  },
) {
  const t = terminal();
  const status = await runCommandLine(argv, {
    version: '0.1.0',
    env: {},
    io: t.io,
    openServer,
    modelSettings,
  });
  return { status, stdout: t.out(), stderr: t.err() };
}

describe('docindex command line', () => {
  it('prints the usage: exit 0 when asked, 1 with no command', async () => {
    expect(await run(['--help'])).toEqual({ status: 0, stdout: `${USAGE}\n`, stderr: '' });
    expect(await run([])).toMatchObject({ status: 1, stdout: `${USAGE}\n` });
    // After any command too, without opening the server side.
    const closed = async (): Promise<ServerSide> => {
      throw new Error('--help must not open the server side');
    };
    expect(await run(['orgs', '--help'], closed)).toEqual({ status: 0, stdout: `${USAGE}\n`, stderr: '' });
    expect(await run(['keys', 'list', '-h'], closed)).toEqual({
      status: 0,
      stdout: `${USAGE}\n`,
      stderr: '',
    });
  });

  it('an unknown command is one line with the nearest command and a pointer to --help: exit 2', async () => {
    const opened: string[] = [];
    const server = async () => {
      opened.push('open');
      return fakeServer();
    };
    expect(await run(['qurey', 'otters'], server)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'docindex: unknown command "qurey"; did you mean "query"? (see docindex --help)\n',
    });
    expect((await run(['ingets'], server)).stderr).toBe(
      'docindex: unknown command "ingets"; did you mean "ingest"? (see docindex --help)\n',
    );
    expect(await run(['frobnicate'], server)).toEqual({
      status: 2,
      stdout: '',
      stderr: 'docindex: unknown command "frobnicate" (see docindex --help)\n',
    });
    expect((await run(['orgs', 'lst'], server)).stderr).toBe(
      'docindex: unknown command "orgs lst"; did you mean "orgs list"? (see docindex --help)\n',
    );
    // A mistyped command needs no configuration: the server side is opened only for "orgs lst".
    expect(opened).toEqual(['open']);
  });

  it('an option error is one line: the unknown option and the nearest one, a missing or bad value', async () => {
    const cases: [string[], string][] = [
      [['query', 'otters', '--topk', '3'], 'docindex query: unknown option --topk; did you mean --top-k?'],
      [
        ['query', 'otters', '--top-k', 'abc'],
        'docindex query: --top-k must be a whole number from 1 to 100, got "abc"',
      ],
      [['query', 'otters', '--top-k'], 'docindex query: --top-k needs a value'],
      [
        ['query', 'otters', '--top-k', '-3'],
        'docindex query: --top-k needs a value; to give one that starts with "-", write --top-k=-3',
      ],
      [['ls', '--json=yes'], 'docindex ls: --json takes no value, got "--json=yes"'],
      [
        ['ingest', 'a.txt', '--chunk-size', '64'],
        'docindex ingest: --chunk-size must be a whole number from 128 to 4096, got "64"',
      ],
      [['serve', '--bogus'], 'docindex: unknown option --bogus'],
      [['serve', '--no-workers'], 'docindex: unknown option --no-workers; did you mean --no-worker?'],
    ];
    for (const [argv, line] of cases) {
      expect(await run(argv), argv.join(' ')).toEqual({
        status: 2,
        stdout: '',
        stderr: `${line} (see docindex --help)\n`,
      });
    }
  });

  it('orgs list and keys list: aligned tables or --json, never a key', async () => {
    const orgs = await run(['orgs', 'list']);
    expect(orgs.status).toBe(0);
    expect(orgs.stdout.split('\n')).toEqual([
      'ORG ID  NAME             RATE LIMIT (RPM)  ACTIVE KEYS  QUERIES (30 D)  CREATED (UTC)',
      'org_1   Acme             600               1            1284            2026-01-05 09:30',
      'org_2   Globex Research  60                0            0               2026-01-04 08:00',
      '',
    ]);
    expect(JSON.parse((await run(['orgs', 'list', '--json'])).stdout)).toEqual(ORGS);

    const keys = await run(['keys', 'list', '--org', 'org_1']);
    expect(keys.status).toBe(0);
    expect(keys.stdout.split('\n')).toEqual([
      'KEY ID  KEY            SCOPES                            EXPIRES (UTC)     CREATED (UTC)     STATE',
      'key_1   dix_AbCdEfGh…  query,read                        2099-01-01 00:00  2026-01-05 09:30  active',
      'key_2   dix_ZyXwVuTs…  ingest,query,read,write,webhooks  never             2026-01-06 10:00  revoked 2026-02-01 00:00',
      '',
    ]);
    expect(JSON.parse((await run(['keys', 'list', '--org', 'org_1', '--json'])).stdout)).toEqual(KEYS);
    expect(await run(['keys', 'list'])).toMatchObject({
      status: 2,
      stderr: 'docindex: keys list needs --org ORG_ID (see docindex --help)\n',
    });
    expect(await run(['keys', 'list', '--org', 'org_nope'])).toEqual({
      status: 1,
      stdout: '',
      stderr: 'docindex: no organisation with id org_nope\n',
    });
  });

  it('an invalid environment exits 2 with the configuration problems alone', async () => {
    const result = await run(['migrate'], async () => {
      throw new ConfigError(['PORT must be a whole number, got "eighty"']);
    });
    expect(result).toEqual({
      status: 2,
      stdout: '',
      stderr: 'invalid configuration:\n  - PORT must be a whole number, got "eighty"\n',
    });
  });

  it('an unknown organisation or key exits 1, and the admin session is closed', async () => {
    const calls: string[] = [];
    const server = async () => fakeServer(calls);
    expect(await run(['orgs', 'set-rate-limit', 'org_nope', '60'], server)).toEqual({
      status: 1,
      stdout: '',
      stderr: 'docindex: no organisation with id org_nope\n',
    });
    expect(await run(['keys', 'revoke', 'key_nope'], server)).toMatchObject({
      status: 1,
      stderr: 'docindex: no key with id key_nope (or it is already revoked)\n',
    });
    expect((await run(['orgs', 'set-rate-limit', 'org_nope', 'abc'], server)).status).toBe(2);
    expect(calls).toEqual(['open', 'close', 'open', 'close', 'open', 'close']);
  });

  it('runs what the server side offers and prints the result', async () => {
    const calls: string[] = [];
    const server = async () => fakeServer(calls);
    expect(await run(['serve', '--no-worker'], server)).toMatchObject({ status: 0 });
    expect(await run(['migrate'], server)).toMatchObject({ status: 0, stdout: 'migrations applied\n' });
    expect(await run(['keys', 'create', '--org', 'org_1', '--json'], server)).toEqual({
      status: 0,
      stdout: '{"org_id":"org_1","key_id":"key_1","api_key":"dix_secret"}\n',
      stderr: '',
    });
    expect(calls).toEqual(['serve worker=false', 'migrate', 'open', 'close']);
  });

  it('keys create --expires-at: a date or an RFC 3339 date-time on the calendar, else exit 2 and no key', async () => {
    const expiries: (Date | null | undefined)[] = [];
    const server = async (): Promise<ServerSide> => {
      const base = fakeServer();
      return {
        ...base,
        openAdmin: async () => {
          const opened = await base.openAdmin();
          return {
            ...opened,
            admin: {
              ...opened.admin,
              issueKey: async (orgId, options) => {
                expiries.push(options?.expiresAt);
                return { org_id: orgId, key_id: 'key_1', api_key: 'dix_secret' };
              },
            },
          };
        },
      };
    };
    const create = (at: string) => run(['keys', 'create', '--org', 'org_1', '--expires-at', at], server);
    for (const at of [
      '2099-01-01T23:59:60Z',
      '2099-02-30',
      '2099-02-30T00:00:00Z',
      '2099-01-01T24:00:00Z',
      '2099-1-1',
      '2099-01-01T10:00:00+25:00',
      'tomorrow',
    ]) {
      const result = await create(at);
      expect(result, at).toMatchObject({ status: 2, stdout: '' });
      expect(result.stderr, at).toMatch(/^docindex: --expires-at takes /);
      expect(result.stderr, at).toContain(JSON.stringify(at));
    }
    expect(expiries).toEqual([]);
    expect((await create('2099-03-01')).status).toBe(0);
    expect((await create('2099-03-01T10:00:00+02:00')).status).toBe(0);
    expect(expiries).toEqual([new Date('2099-03-01T00:00:00Z'), new Date('2099-03-01T08:00:00Z')]);
  });

  it('keys create --partition (repeatable) limits the key; a bad name is exit 2 and no key', async () => {
    const asked: (string[] | undefined)[] = [];
    const server = async (): Promise<ServerSide> => {
      const base = fakeServer();
      return {
        ...base,
        openAdmin: async () => {
          const opened = await base.openAdmin();
          return {
            ...opened,
            admin: {
              ...opened.admin,
              issueKey: async (orgId, options) => {
                asked.push(options?.partitions);
                return {
                  org_id: orgId,
                  key_id: 'key_1',
                  api_key: 'dix_secret',
                  partitions: options?.partitions ?? null,
                };
              },
            },
          };
        },
      };
    };
    const made = await run(
      ['keys', 'create', '--org', 'org_1', '--partition', 'support', '--partition', 'sales', '--json'],
      server,
    );
    expect(made.status).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ key_id: 'key_1', partitions: ['support', 'sales'] });
    const bad = await run(['keys', 'create', '--org', 'org_1', '--partition', 'Sales Team'], server);
    expect(bad).toMatchObject({ status: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^docindex: --partition takes a partition name/);
    expect(asked).toEqual([['support', 'sales']]);
  });

  it('keys create --principal (repeatable) binds the key; an empty one is exit 2 and no key', async () => {
    const asked: (string[] | undefined)[] = [];
    const server = async (): Promise<ServerSide> => {
      const base = fakeServer();
      return {
        ...base,
        openAdmin: async () => {
          const opened = await base.openAdmin();
          return {
            ...opened,
            admin: {
              ...opened.admin,
              issueKey: async (orgId, options) => {
                asked.push(options?.principals);
                return {
                  org_id: orgId,
                  key_id: 'key_1',
                  api_key: 'dix_secret',
                  principals: options?.principals ?? null,
                };
              },
            },
          };
        },
      };
    };
    const made = await run(
      ['keys', 'create', '--org', 'org_1', '--principal', 'user:42', '--principal', 'group:eng'],
      server,
    );
    expect(made.status).toBe(0);
    expect(made.stdout).toContain('principals: user:42,group:eng');
    const bad = await run(['keys', 'create', '--org', 'org_1', '--principal', ''], server);
    expect(bad).toMatchObject({ status: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^docindex: --principal takes a principal of 1 to 128 characters/);
    expect(asked).toEqual([['user:42', 'group:eng']]);
  });

  it('client commands need no server configuration; setup problems exit 2 without the usage', async () => {
    const result = await run(['usage'], async () => {
      throw new Error('the server side must not be opened for a client command');
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^docindex usage: no API key: set DOCINDEX_API_KEY/);
    expect(result.stderr).not.toContain('Client (talks to a running server');
  });

  it('models commands check their arguments before the configuration: exit 2 with one line', async () => {
    for (const argv of [
      ['models'],
      ['models', 'fetch', 'Xenova/bge-small-en-v1.5'],
      ['models', 'pull'],
      ['models', 'pull', '../etc'],
      ['models', 'pull', 'Xenova/bge-small-en-v1.5@'],
      ['models', 'pull', 'Xenova/bge-small-en-v1.5', '--variant', 'fp8'],
      ['models', 'pull', 'Xenova/bge-small-en-v1.5', '--kind', 'chat'],
      ['models', 'list', 'extra'],
    ]) {
      const result = await run(argv);
      expect(result.status, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toMatch(/^docindex: .+ \(see docindex --help\)\n$/);
    }
    expect((await run(['models', 'pull', '../etc'])).stderr).toMatch(/is not a Hub repository id/);
    expect((await run(['models', 'pull', 'a/b', '--variant', 'fp8'])).stderr).toMatch(
      /--variant takes fp32 or quantized, got "fp8"/,
    );
  });

  it('models commands with an invalid environment exit 2 with the configuration problems', async () => {
    const result = await run(['models', 'list'], undefined, () => {
      throw new ConfigError(['HF_ENDPOINT must be an http:// or https:// URL (e.g. https://huggingface.co)']);
    });
    expect(result).toEqual({
      status: 2,
      stdout: '',
      stderr:
        'invalid configuration:\n  - HF_ENDPOINT must be an http:// or https:// URL (e.g. https://huggingface.co)\n',
    });
  });

  it('a bug is not dressed up as a user error', async () => {
    await expect(
      run(['migrate'], async () => {
        throw new TypeError('boom');
      }),
    ).rejects.toThrow('boom');
  });
});
