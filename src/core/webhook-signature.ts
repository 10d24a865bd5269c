/**
 * How a webhook post is signed: two schemes side by side, one secret (`whsec_…`).
 *
 * - **Standard Webhooks** (standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, the key being the
 *   secret's part after `whsec_` base64-decoded, as the scheme's libraries do. The event id is
 *   signed, so a captured post replayed under another id fails; receivers de-duplicate by it.
 *   Several signatures (a rotation's grace period) are separated by spaces.
 * - **`Sluice-Signature`** (the earlier scheme, Stripe's shape, kept for a transition):
 *   `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` keyed by the secret's whole text as
 *   it was shown, `whsec_` included (what receivers written for it use). It signs the body only;
 *   the body's `id` is the event id, which is what such receivers de-duplicate by (the unsigned
 *   `Sluice-Event-Id` header only repeats it).
 *
 * A receiver recomputes the HMAC over the exact bytes it received, compares in constant time, and
 * refuses a timestamp too far from its clock.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

/** The Standard Webhooks key of a secret: its part after `whsec_`, base64-decoded (either alphabet). */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** `webhook-signature` for `body` of event `id` signed at `unixSeconds`, one `v1,` per secret. */
export function standardWebhookSignature(id: string, unixSeconds: number, body: string, secrets: readonly string[]): string {
  const signed = `${id}.${unixSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', standardWebhookKey(secret)).update(signed).digest('base64')}`).join(' ');
}

/** The Standard Webhooks headers of a post. */
export function standardWebhookHeaders(id: string, unixSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': standardWebhookSignature(id, unixSeconds, body, secrets),
  };
}

/**
 * What a receiver does with the Standard Webhooks headers: whether one `v1` signature of `body`
 * under `secret` matches `webhook-id` and `webhook-timestamp`, signed no more than
 * `toleranceSeconds` from `nowSeconds`.
 */
export function verifyStandardWebhook(
  body: string,
  headers: { id: string; timestamp: string; signature: string },
  secret: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const t = Number(headers.timestamp);
  if (!/^\d+$/.test(headers.timestamp) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', standardWebhookKey(secret)).update(`${headers.id}.${t}.${body}`).digest();
  return headers.signature.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(expected, given);
  });
}

/** The `Sluice-Signature` header for `body` signed at `unixSeconds` with each of `secrets`. */
export function signatureHeader(body: string, secrets: readonly string[], unixSeconds: number): string {
  const signed = `${unixSeconds}.${body}`;
  return [`t=${unixSeconds}`, ...secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`)].join(',');
}

/**
 * What a receiver of `Sluice-Signature` does: whether `header` carries a valid `v1` of `body`
 * under `secret`, signed no more than `toleranceSeconds` from `nowSeconds`.
 */
export function verifySignature(body: string, header: string, secret: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.split('=', 2) as [string, string | undefined]);
  const t = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return parts.some(([key, value]) => {
    if (key !== 'v1' || value === undefined || !/^[0-9a-f]{64}$/.test(value)) return false;
    return timingSafeEqual(expected, Buffer.from(value, 'hex'));
  });
}
