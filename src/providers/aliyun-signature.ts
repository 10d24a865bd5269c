/**
 * Aliyun (Alibaba Cloud) RPC signature, version 1.0 (HMAC-SHA1), as documented in "Request syntax
 * and signature method V2 for RPC APIs":
 *
 *   CanonicalizedQueryString = params sorted by name, `encode(name)=encode(value)` joined by `&`
 *   StringToSign = HTTPMethod + "&" + encode("/") + "&" + encode(CanonicalizedQueryString)
 *   Signature    = Base64(HMAC-SHA1(AccessKeySecret + "&", StringToSign))
 *
 * `encode` is RFC 3986 percent-encoding of the UTF-8 bytes with Aliyun's rule that only
 * `A-Z a-z 0-9 - _ . ~` stay literal (space is `%20`, `*` is `%2A`, `~` is not encoded).
 * test/providers/aliyun-sms.test.ts checks this against Aliyun's published examples.
 */
import { createHmac } from 'node:crypto';

export function aliyunPercentEncode(value: string): string {
  // encodeURIComponent leaves A-Z a-z 0-9 - _ . ! ~ * ' ( ) alone; Aliyun wants the last five encoded but `~`.
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function aliyunCanonicalQuery(params: Record<string, string>): string {
  return Object.keys(params)
    .sort()
    .map((name) => `${aliyunPercentEncode(name)}=${aliyunPercentEncode(params[name] as string)}`)
    .join('&');
}

export function aliyunStringToSign(method: 'GET' | 'POST', params: Record<string, string>): string {
  return `${method}&${aliyunPercentEncode('/')}&${aliyunPercentEncode(aliyunCanonicalQuery(params))}`;
}

/** The `Signature` value (before URL-encoding) for `params`, which must not already hold one. */
export function aliyunSignature(method: 'GET' | 'POST', params: Record<string, string>, accessKeySecret: string): string {
  return createHmac('sha1', `${accessKeySecret}&`).update(aliyunStringToSign(method, params), 'utf8').digest('base64');
}

/** ISO 8601 UTC without milliseconds, the only `Timestamp` form Aliyun accepts. */
export function aliyunTimestamp(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}Z`;
}
