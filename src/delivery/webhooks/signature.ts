/**
 * The `Sluice-Signature` header (Stripe's scheme): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`, one `v1=` per secret in use (two during a rotation's grace period). A receiver
 * recomputes the HMAC with its secret over the exact bytes it received, compares in constant
 * time, and refuses a `t` too far from its clock (replays).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header for `body` signed at `unixSeconds` with each of `secrets`. */
export function signatureHeader(body: string, secrets: readonly string[], unixSeconds: number): string {
  const signed = `${unixSeconds}.${body}`;
  return [`t=${unixSeconds}`, ...secrets.map((secret) => `v1=${createHmac('sha256', secret).update(signed).digest('hex')}`)].join(',');
}

/**
 * What a receiver does: whether `header` carries a valid `v1` of `body` under `secret`, signed no
 * more than `toleranceSeconds` from `nowSeconds`.
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
