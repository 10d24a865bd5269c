/**
 * Slack incoming webhook: POST `{"text": ...}`; Slack answers `200 ok`, or an HTTP error whose body
 * is a short reason (`invalid_payload`, `channel_not_found`, `channel_is_archived`...).
 * 429 (with `Retry-After`, honoured through `retryAfterMs`) and 5xx are retryable; other 4xx are
 * permanent. The webhook URL is a credential (anyone holding it can post), so it lives in `secret`.
 * Slack has no idempotency field for incoming webhooks: a retried attempt may post twice.
 */
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import { postOnce } from './http-request.js';
import {
  isProviderFaultHttpStatus,
  isRetryableHttpStatus,
  type OutboundMessage,
  type Provider,
  ProviderError,
  parseRetryAfter,
  type SendResult,
  truncate,
} from './provider.js';
import { defineProviderKind } from './provider-kind.js';

export interface SlackProviderOptions {
  id: string;
  channel: Channel;
  webhookUrl: string;
  timeoutMs: number;
  /** Resolves the vendor's host for a new connection (the process's bounded resolver); absent: `dns.lookup`. */
  lookup?: LookupFunction | undefined;
}

export function createSlackProvider(options: SlackProviderOptions): Provider {
  return {
    id: options.id,
    kind: 'slack',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const text = message.subject ? `*${message.subject}*\n${message.body ?? ''}` : (message.body ?? '');
      const answer = await postOnce({
        providerId: options.id,
        url: options.webhookUrl,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ text }),
        timeoutMs: options.timeoutMs,
        signal,
        lookup: options.lookup,
      });
      if (answer.status >= 200 && answer.status < 300) return { providerMessageId: `slack-${message.id}` };
      const reason = answer.text.trim();
      const code = /^[a-z_]{1,64}$/.test(reason) ? `SLACK_${reason}` : `HTTP_${answer.status}`;
      const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'));
      throw new ProviderError(`provider ${options.id}: Slack webhook HTTP ${answer.status}: ${truncate(reason) || '(empty body)'}`, {
        retryable: isRetryableHttpStatus(answer.status),
        // invalid_token, no_service, channel_not_found, channel_is_archived: the hook, not the message.
        providerFault: isProviderFaultHttpStatus(answer.status),
        code,
        status: answer.status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    },
  };
}

/** `slack`: a Slack incoming webhook, whose URL is the credential. */
export const slackKind = defineProviderKind({
  kind: 'slack',
  channel: 'webhook',
  config: { required: [], optional: [] },
  secret: { required: ['webhookUrl'], optional: [] },
  credentialRoute: [],
  build: (read, { id, channel, lookup }) =>
    createSlackProvider({ id, channel, webhookUrl: read.secretUrl('webhookUrl'), timeoutMs: read.timeoutMs(), lookup }),
});
