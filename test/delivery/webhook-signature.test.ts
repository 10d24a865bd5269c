/**
 * The two signatures of a webhook post. The Standard Webhooks one is checked against the
 * scheme's published test vector (standard-webhooks/standard-webhooks,
 * libraries/javascript/src/webhook.test.ts, "sign function works"), so any receiver using one of
 * its libraries verifies sluice's posts; and it signs the event id, so a captured post replayed
 * under a new id fails.
 */
import { describe, expect, it } from 'vitest';
import {
  signatureHeader,
  standardWebhookHeaders,
  standardWebhookKey,
  standardWebhookSignature,
  verifySignature,
  verifyStandardWebhook,
} from '../../src/core/webhook-signature.js';

const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1_614_265_330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('webhook signatures', () => {
  it("matches the Standard Webhooks test vector: the secret's part after whsec_ is base64-decoded", () => {
    expect(standardWebhookSignature(VECTOR.id, VECTOR.timestamp, VECTOR.body, [VECTOR.secret])).toBe(VECTOR.signature);
    expect(standardWebhookKey(VECTOR.secret)).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
    const headers = { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: VECTOR.signature };
    expect(verifyStandardWebhook(VECTOR.body, headers, VECTOR.secret, VECTOR.timestamp + 10)).toBe(true);
  });

  it('signs the id: a captured post replayed under another id, or later, or altered, fails', () => {
    const now = 1_764_603_000;
    const body = '{"id":"evt_1","type":"message.sent"}';
    const sent = standardWebhookHeaders('evt_1', now, body, [VECTOR.secret]);
    const headers = { id: sent['webhook-id']!, timestamp: sent['webhook-timestamp']!, signature: sent['webhook-signature']! };
    expect(verifyStandardWebhook(body, headers, VECTOR.secret, now)).toBe(true);
    expect(verifyStandardWebhook(body, { ...headers, id: 'evt_2' }, VECTOR.secret, now)).toBe(false);
    expect(verifyStandardWebhook(body, headers, VECTOR.secret, now + 301)).toBe(false);
    expect(verifyStandardWebhook(`${body} `, headers, VECTOR.secret, now)).toBe(false);
    expect(verifyStandardWebhook(body, headers, 'whsec_c29tZXRoaW5nIGVsc2U=', now)).toBe(false);
  });

  it('during a rotation carries one signature per secret, each verifiable alone, in both schemes', () => {
    const now = 1_764_603_000;
    const secrets = ['whsec_bmV3IHNlY3JldCBieXRlcyBoZXJlIQ==', VECTOR.secret];
    const sent = standardWebhookHeaders('evt_1', now, '{}', secrets);
    expect(sent['webhook-signature']!.split(' ')).toHaveLength(2);
    const headers = { id: 'evt_1', timestamp: String(now), signature: sent['webhook-signature']! };
    for (const secret of secrets) {
      expect(verifyStandardWebhook('{}', headers, secret, now)).toBe(true);
      expect(verifySignature('{}', signatureHeader('{}', secrets, now), secret, now)).toBe(true);
    }
  });

  it('Sluice-Signature stays keyed by the whole secret text (receivers written for it keep working)', () => {
    const header = signatureHeader('{}', [VECTOR.secret], 1_764_603_000);
    expect(verifySignature('{}', header, VECTOR.secret, 1_764_603_000)).toBe(true);
    expect(verifySignature('{}', header, 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 1_764_603_000)).toBe(false);
  });
});
