// The fetcher's address and URL rules as pure functions: every SSRF case is decided here without
// DNS or sockets, so a policy bug cannot send real traffic.
import { describe, expect, it } from 'vitest';
import {
  checkSubmittedUrl,
  createAddressPolicy,
  isPublicAddress,
  redactUrl,
} from '../../src/pipeline/fetch/index.js';

const noAllowList = createAddressPolicy({ allow: [] });

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback /8'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network" 0/8'],
    ['10.0.0.1', 'private 10/8'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 top'],
    ['192.168.1.1', 'private 192.168/16'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'Alibaba metadata in CGNAT'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.0.1', 'link-local'],
    ['192.0.0.1', 'IETF protocol assignments 192.0.0/24'],
    ['192.0.2.1', 'documentation TEST-NET-1'],
    ['198.51.100.1', 'documentation TEST-NET-2'],
    ['203.0.113.1', 'documentation TEST-NET-3'],
    ['198.18.0.1', 'benchmarking 198.18/15'],
    ['198.19.255.1', 'benchmarking 198.18/15 top'],
    ['224.0.0.1', 'multicast'],
    ['240.0.0.1', 'reserved 240/4'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['64:ff9b::c0a8:101', 'NAT64 of 192.168.1.1'],
    ['64:ff9b:1::a00:1', 'local-use NAT64 prefix'],
    ['::7f00:1', 'IPv4-compatible (deprecated)'],
    ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
    ['fd00:ec2::254', 'AWS IPv6 metadata (unique local)'],
    ['fc00::1', 'unique local'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'link-local with zone'],
    ['fec0::1', 'deprecated site-local'],
    ['ff02::1', 'IPv6 multicast'],
    ['100::1', 'discard-only'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['3fff::1', 'IPv6 documentation 3fff::/20'],
    ['2002:7f00:1::1', '6to4 embedding loopback'],
    ['2002:808:808::1', '6to4 (blocked wholesale)'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['5f00::1', 'SRv6 SIDs'],
    ['4000::1', 'outside 2000::/3'],
    ['127.1', 'non-canonical IPv4 text'],
    ['0x7f.1', 'hex IPv4 text'],
    ['0177.0.0.1', 'octal IPv4 text'],
    ['010.0.0.1', 'leading zero (octal to ipaddr.js)'],
    ['2130706433', 'integer IPv4 text'],
    ['[::1]', 'bracketed'],
    ['localhost', 'a hostname'],
    ['', 'empty'],
  ])('%s (%s) is not public', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('%s is public', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
});

describe('checkSubmittedUrl', () => {
  it.each([
    ['http://127.1/', 'is not a public address'],
    ['http://0177.0.0.1/', 'is not a public address'],
    ['http://0x7f.1/', 'is not a public address'],
    ['http://0x7f000001/', 'is not a public address'],
    ['http://2130706433/', 'is not a public address'],
    ['http://017700000001/', 'is not a public address'],
    ['http://127.000.000.001/', 'is not a public address'],
    ['http://%31%32%37.0.0.1/', 'is not a public address'],
    ['http://１２７.0.0.1/', 'is not a public address'],
    ['http://0/', 'is not a public address'],
    ['http://0.0.0.0:8080/', 'is not a public address'],
    ['http://[::1]/', 'is not a public address'],
    ['http://[::ffff:127.0.0.1]/', 'is not a public address'],
    ['http://[::ffff:7f00:1]/', 'is not a public address'],
    ['http://[::]/', 'is not a public address'],
    ['http://[::127.0.0.1]/', 'is not a public address'],
    ['http://[64:ff9b::7f00:1]/', 'is not a public address'],
    ['http://169.254.169.254/latest/meta-data/', 'is not a public address'],
    ['http://[::ffff:a9fe:a9fe]/latest/meta-data/', 'is not a public address'],
    ['http://[fd00:ec2::254]/', 'is not a public address'],
    ['http://[fe80::1]/', 'is not a public address'],
    ['http://10.0.0.1/', 'is not a public address'],
    ['http://172.16.0.1/', 'is not a public address'],
    ['http://192.168.1.1/', 'is not a public address'],
    ['http://100.64.0.1/', 'is not a public address'],
    ['http://198.18.0.1/', 'is not a public address'],
    ['http://192.0.0.170/', 'is not a public address'],
    ['http://224.0.0.1/', 'is not a public address'],
    ['https://255.255.255.255/', 'is not a public address'],
    ['http://evil@127.0.0.1/', 'credentials'],
    ['http://user:pass@example.com/', 'credentials'],
    ['http://user@example.com/', 'credentials'],
    ['https://:secret@example.com/', 'credentials'],
    ['file:///etc/passwd', 'only http and https'],
    ['gopher://127.0.0.1:70/', 'only http and https'],
    ['ftp://example.com/file.pdf', 'only http and https'],
    // A special scheme without a host does not even parse.
    ['ftp://', 'not a valid absolute URL'],
    ['javascript:alert(1)', 'only http and https'],
    ['data:text/plain,hello', 'only http and https'],
    ['ws://example.com/', 'only http and https'],
    ['not a url', 'not a valid absolute URL'],
    ['/relative/path', 'not a valid absolute URL'],
    ['http://', 'not a valid absolute URL'],
    // Names that always mean this machine or a metadata service, in any spelling, before any DNS.
    ['http://localhost/', 'names this machine'],
    ['http://localhost.:8080/', 'names this machine'],
    ['http://LOCALHOST../x', 'names this machine'],
    ['http://api.localhost/', 'names this machine'],
    ['http://a.b.LocalHost./', 'names this machine'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata service'],
    ['http://metadata.google.internal./', 'metadata service'],
    ['http://metadata/', 'metadata service'],
  ])('%s is refused (%s)', (raw, reason) => {
    const result = checkSubmittedUrl(raw, noAllowList);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toContain(reason);
  });

  it.each([
    'https://example.com/report.pdf',
    'HTTP://Example.COM:8080/a/b?c=d',
    'http://8.8.8.8/',
    'https://[2606:4700:4700::1111]/',
    // Other hostnames are decided at connect time, against every address they resolve to.
    'http://internal.corp/',
    'http://localhost.example.com/',
    'http://bücher.test/',
  ])('%s passes the submit check', (raw) => {
    const result = checkSubmittedUrl(raw, noAllowList);
    expect(result.ok).toBe(true);
  });

  it('never puts the query string of a refused URL into the reason', () => {
    const result = checkSubmittedUrl('http://127.0.0.1/file.pdf?sig=SECRETSIG&expires=1', noAllowList);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).not.toMatch(/SECRETSIG|sig=/);
  });

  it('says which URL_FETCH_ALLOW entry would admit an address refused as not public, and only then', () => {
    const reason = (raw: string) => {
      const result = checkSubmittedUrl(raw, noAllowList);
      return result.ok ? null : result.reason;
    };
    expect(reason('http://127.0.0.1:9999/hook?sig=SECRETSIG')).toBe(
      '127.0.0.1 is not a public address (the server accepts it when started with URL_FETCH_ALLOW=127.0.0.1:9999)',
    );
    expect(reason('https://[::1]/hook')).toMatch(/URL_FETCH_ALLOW=\[::1\]:443\)$/);
    expect(reason('http://localhost/x')).toMatch(/URL_FETCH_ALLOW=localhost:80\)$/);
    // The entry it names does admit it.
    const policy = createAddressPolicy({ allow: ['127.0.0.1:9999', '[::1]:443', 'localhost:80'] });
    for (const raw of ['http://127.0.0.1:9999/hook', 'https://[::1]/hook', 'http://localhost/x']) {
      expect(checkSubmittedUrl(raw, policy).ok, raw).toBe(true);
    }
    // Refusals no allow-list entry would lift name no variable.
    expect(reason('ftp://example.com/x')).not.toContain('URL_FETCH_ALLOW');
    expect(reason('http://user:pw@example.com/x')).not.toContain('URL_FETCH_ALLOW');
  });

  it('lets an allow-listed host:port through, on that port only, in any notation', () => {
    const policy = createAddressPolicy({ allow: ['127.0.0.1:8080'] });
    expect(checkSubmittedUrl('http://127.0.0.1:8080/x', policy).ok).toBe(true);
    expect(checkSubmittedUrl('http://0x7f.1:8080/x', policy).ok).toBe(true);
    expect(checkSubmittedUrl('http://127.0.0.1:8081/x', policy).ok).toBe(false);
    expect(checkSubmittedUrl('http://127.0.0.1/x', policy).ok).toBe(false);
    expect(checkSubmittedUrl('http://127.0.0.2:8080/x', policy).ok).toBe(false);
  });

  it('lets an allow-listed local name through by name and port, in any spelling', () => {
    const policy = createAddressPolicy({ allow: ['localhost:8080'] });
    expect(checkSubmittedUrl('http://localhost:8080/x', policy).ok).toBe(true);
    expect(checkSubmittedUrl('http://LocalHost.:8080/x', policy).ok).toBe(true);
    expect(checkSubmittedUrl('http://localhost:8081/x', policy).ok).toBe(false);
    expect(checkSubmittedUrl('http://api.localhost:8080/x', policy).ok).toBe(false);
  });

  it('uses the scheme default port when matching the allow list', () => {
    const policy = createAddressPolicy({ allow: ['10.0.0.7:443'] });
    expect(checkSubmittedUrl('https://10.0.0.7/x', policy).ok).toBe(true);
    expect(checkSubmittedUrl('http://10.0.0.7/x', policy).ok).toBe(false);
  });
});

describe('createAddressPolicy', () => {
  it('allows public addresses and refuses the rest when nothing is allow-listed', () => {
    expect(noAllowList.isAllowed('93.184.216.34', 443, 'example.com')).toBe(true);
    expect(noAllowList.isAllowed('10.0.0.1', 443, 'example.com')).toBe(false);
    expect(noAllowList.isAllowed('not-an-ip', 443, 'example.com')).toBe(false);
  });

  it('matches address entries with or without a port, including the IPv4-mapped form', () => {
    const policy = createAddressPolicy({ allow: ['127.0.0.1:9000', '192.168.5.5', '[::1]:9001'] });
    expect(policy.isAllowed('127.0.0.1', 9000, '127.0.0.1')).toBe(true);
    expect(policy.isAllowed('::ffff:127.0.0.1', 9000, 'storage.test')).toBe(true);
    expect(policy.isAllowed('127.0.0.1', 9001, '127.0.0.1')).toBe(false);
    expect(policy.isAllowed('192.168.5.5', 1, '192.168.5.5')).toBe(true);
    expect(policy.isAllowed('192.168.5.6', 1, '192.168.5.6')).toBe(false);
    expect(policy.isAllowed('::1', 9001, '::1')).toBe(true);
    expect(policy.isAllowed('::1', 9000, '::1')).toBe(false);
  });

  it('matches CIDR entries of either family on any port', () => {
    const policy = createAddressPolicy({ allow: ['10.20.0.0/16', 'fd12:3456::/32'] });
    expect(policy.isAllowed('10.20.99.1', 80, 'a')).toBe(true);
    expect(policy.isAllowed('10.21.0.1', 80, 'a')).toBe(false);
    expect(policy.isAllowed('fd12:3456::9', 443, 'a')).toBe(true);
    expect(policy.isAllowed('fd12:3457::9', 443, 'a')).toBe(false);
  });

  it('matches hostname entries by name (case and trailing dot ignored) but never unlocks metadata', () => {
    const policy = createAddressPolicy({ allow: ['minio.internal:9000', 'blobs.corp'] });
    expect(policy.isAllowed('10.0.0.5', 9000, 'minio.internal')).toBe(true);
    expect(policy.isAllowed('10.0.0.5', 9000, 'MINIO.Internal.')).toBe(true);
    expect(policy.isAllowed('10.0.0.5', 9001, 'minio.internal')).toBe(false);
    expect(policy.isAllowed('10.0.0.5', 9000, 'other.internal')).toBe(false);
    expect(policy.isAllowed('172.16.0.9', 1234, 'blobs.corp')).toBe(true);
    expect(policy.isAllowed('169.254.169.254', 9000, 'minio.internal')).toBe(false);
    expect(policy.isAllowed('fd00:ec2::254', 80, 'blobs.corp')).toBe(false);
  });

  it.each([
    '10.0.0.0/33',
    '10.0.0/8',
    'http://storage.internal',
    'storage.internal:0',
    'storage.internal:99999',
    'storage.internal:port',
    '127.1',
    '0x7f.1:80',
    '2130706433',
    'two words',
    '[::1',
    '[127.0.0.1]:80',
  ])('refuses the unreadable entry %s', (entry) => {
    expect(() => createAddressPolicy({ allow: [entry] })).toThrow(/URL_FETCH_ALLOW/);
  });

  it('ignores blank entries', () => {
    expect(() => createAddressPolicy({ allow: ['', '  '] })).not.toThrow();
  });
});

describe('redactUrl', () => {
  it('keeps scheme, host, port and path only', () => {
    const raw = 'https://user:pw@s3.example.com:8443/bucket/key.pdf?X-Amz-Signature=abc&sig=1#frag';
    expect(redactUrl(raw)).toBe('https://s3.example.com:8443/bucket/key.pdf');
    expect(redactUrl(new URL(raw))).toBe('https://s3.example.com:8443/bucket/key.pdf');
  });

  it('drops default ports and copes with what is not a URL', () => {
    expect(redactUrl('https://example.com:443/a?b')).toBe('https://example.com/a');
    expect(redactUrl('nonsense')).toBe('[invalid URL]');
    expect(redactUrl('data:text/plain,secret-payload')).toBe('data:…');
  });
});
