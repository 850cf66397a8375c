// The domain's ids, tokens and digests: their forms, the published test vectors of SHA-256 and
// HMAC-SHA256, and the Standard Webhooks example signature that signWebhook must reproduce.
import { describe, expect, it } from 'vitest';
import {
  constantTimeEqual,
  hmacSha256Base64,
  newUuid,
  prefixedId,
  randomToken,
  sha256Bytes,
  sha256Hex,
} from '../../src/domain/ids-and-hashes.js';
import { newKeyId, newOrgId } from '../../src/domain/keys.js';
import { signWebhook } from '../../src/domain/webhook-dispatcher.js';
import { generateWebhookSecret, newEndpointId } from '../../src/domain/webhooks.js';

describe('ids and tokens', () => {
  it('a prefixed id is the prefix and 32 hex digits, a new one each time', () => {
    expect(prefixedId('eval')).toMatch(/^eval_[0-9a-f]{32}$/);
    expect(newOrgId()).toMatch(/^org_[0-9a-f]{32}$/);
    expect(newKeyId()).toMatch(/^key_[0-9a-f]{32}$/);
    expect(prefixedId('run')).not.toBe(prefixedId('run'));
  });

  it('a UUID keeps its dashes; a token has the length its bytes and encoding give', () => {
    expect(newUuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(randomToken(16, 'hex')).toMatch(/^[0-9a-f]{32}$/);
    expect(randomToken(32, 'base64url')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newEndpointId()).toMatch(/^wh_[0-9a-f]{32}$/);
    expect(Buffer.from(generateWebhookSecret().slice('whsec_'.length), 'base64')).toHaveLength(32);
  });
});

describe('digests', () => {
  it('SHA-256 of "abc" (FIPS 180-2), whether given whole or in parts', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(sha256Hex('abc')).toBe(abc);
    expect(sha256Hex('a', 'bc')).toBe(abc);
    expect(sha256Bytes('abc').toString('hex')).toBe(abc);
  });

  it('HMAC-SHA256 of RFC 4231 test case 2', () => {
    expect(hmacSha256Base64(Buffer.from('Jefe'), 'what do ya want for nothing?')).toBe(
      'W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=',
    );
  });

  it('signs the Standard Webhooks example as the specification does', () => {
    expect(
      signWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('constant-time equality is false for different lengths rather than throwing', () => {
    expect(constantTimeEqual(Buffer.from('ab'), Buffer.from('ab'))).toBe(true);
    expect(constantTimeEqual(Buffer.from('ab'), Buffer.from('ac'))).toBe(false);
    expect(constantTimeEqual(Buffer.from('ab'), Buffer.from('abc'))).toBe(false);
  });
});
