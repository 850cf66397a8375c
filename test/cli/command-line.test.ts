// The command line's dispatch and exit codes, with a fake server side: what a user sees for help,
// a wrong command or flag, an invalid environment, and an unknown organisation or key.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ServerSide } from '../../src/cli/admin-commands.js';
import { runCommandLine, USAGE } from '../../src/cli/main.js';
import type { ModelSettings } from '../../src/cli/models-command.js';
import { ConfigError } from '../../src/config/index.js';

function terminal() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = (stream: PassThrough) => () => (stream.read() ?? '').toString();
  return { io: { stdout, stderr }, out: text(stdout), err: text(stderr) };
}

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
  });

  it('an unknown command or flag exits 2 with the message and the usage', async () => {
    expect(await run(['frobnicate'])).toEqual({
      status: 2,
      stdout: '',
      stderr: `docindex: unknown command "frobnicate"\n\n${USAGE}\n`,
    });
    const badFlag = await run(['serve', '--bogus']);
    expect(badFlag.status).toBe(2);
    expect(badFlag.stderr).toMatch(/^docindex: Unknown option '--bogus'/);
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

  it('client commands need no server configuration; setup problems exit 2 without the usage', async () => {
    const result = await run(['usage'], async () => {
      throw new Error('the server side must not be opened for a client command');
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^docindex usage: no API key: set DOCINDEX_API_KEY/);
    expect(result.stderr).not.toContain('Client (talks to a running server');
  });

  it('models commands check their arguments before the configuration: exit 2 with the usage', async () => {
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
      expect(result.stderr, argv.join(' ')).toMatch(/^docindex: .+\n\ndocindex — /);
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
