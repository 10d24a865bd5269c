/**
 * Tencent Cloud API 3.0 signature v3, TC3-HMAC-SHA256, for a POST with a JSON body:
 *
 *   CanonicalRequest = "POST\n/\n\n" + CanonicalHeaders + "\n" + SignedHeaders + "\n" + hex(SHA256(payload))
 *     CanonicalHeaders: `name:value\n` for content-type, host (and x-tc-action, lower-cased), sorted
 *   StringToSign     = "TC3-HMAC-SHA256\n" + timestamp + "\n" + date + "/" + service + "/tc3_request\n" + hex(SHA256(CanonicalRequest))
 *   SecretSigning    = HMAC(HMAC(HMAC("TC3" + SecretKey, date), service), "tc3_request")
 *   Signature        = hex(HMAC(SecretSigning, StringToSign))
 *
 * `date` is the UTC date of the timestamp: computing it in local time breaks at midnight UTC+8.
 * test/providers/tencent-sms.test.ts checks this against Tencent's published examples.
 */
import { createHash, createHmac } from 'node:crypto';

export interface Tc3Request {
  secretId: string;
  secretKey: string;
  /** The product: `sms`, `cvm`... (the first label of the API host). */
  service: string;
  /** The Host header value as sent (`sms.tencentcloudapi.com`, or `127.0.0.1:port` in tests). */
  host: string;
  contentType: string;
  /** When given, `x-tc-action` is signed too (what Tencent's current SDKs and docs do). */
  action?: string;
  /** Unix seconds; also the `X-TC-Timestamp` header. */
  timestamp: number;
  payload: string;
}

export interface Tc3Signature {
  canonicalRequest: string;
  stringToSign: string;
  signedHeaders: string;
  credentialScope: string;
  signature: string;
  authorization: string;
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest();

export function tc3Sign(request: Tc3Request): Tc3Signature {
  const date = new Date(request.timestamp * 1000).toISOString().slice(0, 10);
  const headers: Array<[string, string]> = [
    ['content-type', request.contentType.trim().toLowerCase()],
    ['host', request.host.trim().toLowerCase()],
  ];
  if (request.action !== undefined) headers.push(['x-tc-action', request.action.trim().toLowerCase()]);
  headers.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonicalHeaders = headers.map(([name, value]) => `${name}:${value}\n`).join('');
  const signedHeaders = headers.map(([name]) => name).join(';');
  const canonicalRequest = ['POST', '/', '', canonicalHeaders, signedHeaders, sha256Hex(request.payload)].join('\n');
  const credentialScope = `${date}/${request.service}/tc3_request`;
  const stringToSign = ['TC3-HMAC-SHA256', String(request.timestamp), credentialScope, sha256Hex(canonicalRequest)].join('\n');
  const secretSigning = hmac(hmac(hmac(`TC3${request.secretKey}`, date), request.service), 'tc3_request');
  const signature = createHmac('sha256', secretSigning).update(stringToSign, 'utf8').digest('hex');
  const authorization = `TC3-HMAC-SHA256 Credential=${request.secretId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { canonicalRequest, stringToSign, signedHeaders, credentialScope, signature, authorization };
}
