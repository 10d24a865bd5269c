/**
 * Generic HTTP webhook (kind `http`): POST the message as JSON to a configured URL, signed so the
 * receiver can check it came from this sluice and is fresh, by the two schemes of status
 * callbacks (`core/webhook-signature.ts`), with the message id as the signed id:
 *
 *   webhook-id: <id>   webhook-timestamp: <unix seconds>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>   (Standard Webhooks)
 *   X-Sluice-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>  (the earlier header)
 *   X-Sluice-Message-Id: <id>       Idempotency-Key: <id>
 *
 * The Standard Webhooks key is the secret's part after `whsec_`, base64-decoded, as that scheme's
 * libraries read it; `X-Sluice-Signature` stays keyed by the secret's whole text. The body is
 * `{id, tenantId, channel, to, subject, body, params}`. A receiver verifies over the raw body bytes
 * and refuses a stale timestamp; it drops a retried delivery by the id (a retry carries the same
 * one). Any 2xx is success; the provider message id is the answer's JSON `id` when there is one,
 * else the sluice id. 408/425/429/5xx are retryable (honouring `Retry-After`), other 4xx permanent.
 */
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import { signatureHeader, standardWebhookHeaders } from '../core/webhook-signature.js';
import type { Clock } from '../limiter/clock.js';
import { answerStatusError, isRecord, parseJson, postOnce } from './http-request.js';
import type { OutboundMessage, Provider, SendResult } from './provider.js';
import { defineProviderKind } from './provider-kind.js';

export interface HttpWebhookProviderOptions {
  id: string;
  channel: Channel;
  url: string;
  /**
   * Keys both signatures. A receiver verifying with a Standard Webhooks library needs it as that
   * scheme writes secrets: `whsec_` and the key in base64 (`whsec_$(openssl rand -base64 32)`).
   */
  signingSecret: string;
  timeoutMs: number;
  clock: Clock;
  /** Resolves the vendor's host for a new connection (the process's bounded resolver); absent: `dns.lookup`. */
  lookup?: LookupFunction | undefined;
}

export function createHttpWebhookProvider(options: HttpWebhookProviderOptions): Provider {
  return {
    id: options.id,
    kind: 'http',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const body = JSON.stringify({
        id: message.id,
        tenantId: message.tenantId,
        channel: message.channel,
        to: message.to,
        subject: message.subject ?? null,
        body: message.body ?? null,
        params: message.params ?? {},
      });
      const timestamp = Math.floor(options.clock.now() / 1000);
      const answer = await postOnce({
        providerId: options.id,
        url: options.url,
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          ...standardWebhookHeaders(message.id, timestamp, body, [options.signingSecret]),
          'X-Sluice-Signature': signatureHeader(body, [options.signingSecret], timestamp),
          'X-Sluice-Message-Id': message.id,
          'Idempotency-Key': message.id,
        },
        body,
        timeoutMs: options.timeoutMs,
        signal,
        lookup: options.lookup,
      });
      if (answer.status < 200 || answer.status >= 300) {
        throw answerStatusError(options.id, answer, message.to);
      }
      const json = parseJson(answer.text);
      const id = isRecord(json) && (typeof json.id === 'string' || typeof json.id === 'number') ? String(json.id) : undefined;
      return { providerMessageId: id || message.id };
    },
  };
}

/** `http`: a signed JSON POST to the operator's own receiver. */
export const httpWebhookKind = defineProviderKind({
  kind: 'http',
  channel: 'webhook',
  config: { required: ['url'], optional: [] },
  secret: { required: ['signingSecret'], optional: [] },
  credentialRoute: ['url'],
  build: (read, { id, channel, clock, lookup }) =>
    createHttpWebhookProvider({
      id,
      channel,
      url: read.url('url'),
      signingSecret: read.secretString('signingSecret'),
      timeoutMs: read.timeoutMs(),
      clock,
      lookup,
    }),
});
