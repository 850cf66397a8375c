// The SSRF cases that name non-loopback addresses, run end to end without touching a network: in
// a network namespace that has only `lo` (`unshare -rn`), where a policy bug shows up as a
// connect attempt answered by ENETUNREACH instead of as real traffic. Skipped where unprivileged
// network namespaces are unavailable; the pure-function suite covers the same addresses.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../helpers/process.js';
import type { NetnsCase, NetnsResult } from './fetch-netns-probe.js';

const blocked: NetnsCase[] = [
  { name: 'private 10/8', url: 'http://10.0.0.1/' },
  { name: 'private 172.16/12', url: 'http://172.16.0.1/' },
  { name: 'private 192.168/16', url: 'http://192.168.1.1/' },
  { name: 'carrier-grade NAT', url: 'http://100.64.0.1/' },
  { name: 'cloud metadata', url: 'http://169.254.169.254/latest/meta-data/' },
  { name: 'AWS IPv6 metadata', url: 'http://[fd00:ec2::254]/latest/meta-data/' },
  { name: 'IPv6 link-local', url: 'http://[fe80::1]/' },
  { name: 'NAT64 of metadata', url: 'http://[64:ff9b::a9fe:a9fe]/' },
  { name: 'IPv4-mapped metadata', url: 'http://[::ffff:169.254.169.254]/' },
  { name: '6to4 of metadata', url: 'http://[2002:a9fe:a9fe::1]/' },
  { name: 'unspecified 0.0.0.0', url: 'http://0/' },
  { name: 'unspecified ::', url: 'http://[::]/' },
  { name: 'benchmarking 198.18/15', url: 'http://198.18.0.1/' },
  {
    name: 'hostname → metadata',
    url: 'http://metadata.test/',
    dns: { 'metadata.test': ['169.254.169.254'] },
  },
  { name: 'hostname → private', url: 'http://private.test/', dns: { 'private.test': ['10.1.2.3'] } },
  { name: 'hostname → unique-local v6', url: 'http://v6.test/', dns: { 'v6.test': ['fd00::1'] } },
  {
    name: 'hostname → mapped metadata',
    url: 'http://mapped.test/',
    dns: { 'mapped.test': ['::ffff:169.254.169.254'] },
  },
  {
    name: 'hostname → public + private',
    url: 'http://mixed.test/',
    dns: { 'mixed.test': ['93.184.216.34', '10.0.0.1'] },
  },
  { name: 'redirect → metadata', url: '{server}/?to=http://169.254.169.254/latest/meta-data/' },
  { name: 'redirect → private', url: '{server}/?to=http://10.0.0.1/' },
  { name: 'redirect → v6 metadata', url: '{server}/?to=http://[fd00:ec2::254]/' },
  {
    name: 'redirect → hostname resolving to metadata',
    url: '{server}/?to=http://metadata.test/',
    dns: { 'metadata.test': ['169.254.169.254'] },
  },
];

// Proves the harness can see a bug: an allow-listed private address is let through, and the
// attempt fails with the namespace's ENETUNREACH rather than being refused by the policy.
const control: NetnsCase = {
  name: 'control: allow-listed 10.9.9.9',
  url: 'http://10.9.9.9/',
  allow: ['10.9.9.0/24'],
};

const canUnshare = spawnSync('unshare', ['-rn', 'true']).status === 0;
let results = new Map<string, NetnsResult>();

describe.skipIf(!canUnshare)('SSRF end to end inside an lo-only network namespace', () => {
  beforeAll(async () => {
    const run = await runCommand(
      'unshare',
      [
        '-rn',
        'sh',
        '-c',
        'ip link set lo up && exec node_modules/.bin/vite-node test/pipeline/fetch-netns-probe.ts',
      ],
      {
        timeoutMs: 30_000,
        env: { ...process.env, FETCH_NETNS_CASES: JSON.stringify([...blocked, control]) },
      },
    );
    if (run.status !== 0) throw new Error(`netns probe failed: ${run.stderr}`);
    const lines = run.stdout.trim().split('\n');
    const parsed = JSON.parse(lines[lines.length - 1] ?? '[]') as NetnsResult[];
    results = new Map(parsed.map((result) => [result.name, result]));
  });

  it.each(blocked.map((testCase) => testCase.name))('%s → url_blocked with no connect attempt', (name) => {
    expect(results.get(name)).toEqual({ name, outcome: 'url_blocked', foreignConnects: 0 });
  });

  it('control: an allow-listed private address is attempted and fails as unreachable', () => {
    const result = results.get(control.name);
    expect(result?.outcome).toBe('url_unreachable');
    expect(result?.foreignConnects).toBe(1);
  });
});
