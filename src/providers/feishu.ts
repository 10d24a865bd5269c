/**
 * Feishu / Lark custom bot webhook (自定义机器人), text messages, with the bot's signature check:
 *
 *   sign = Base64(HMAC-SHA256(key = timestamp + "\n" + secret, message = ""))
 *
 * (the string is the HMAC *key* and the message is empty: that is Feishu's documented algorithm,
 * not a mistake). The timestamp is in seconds and must be within an hour of Feishu's clock.
 *
 * Answers: `code: 0` → sent. Retryable: 11232 (frequency limited), 9499 when its msg says
 * "too many request" (9499 is also Feishu's plain "Bad Request", which is permanent), HTTP 429/5xx.
 * Every other code (19021 bad signature, 19024 keyword missing, 9499 Bad Request...) is permanent.
 * Feishu has no idempotency field for bots: a retried attempt may post twice.
 */
import { createHmac } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/clock.js';
import { answerStatusError, isRecord, parseJson, postOnce } from './http-request.js';
import {
  isProviderFaultHttpStatus,
  isRetryableHttpStatus,
  type OutboundMessage,
  type Provider,
  ProviderError,
  type SendResult,
  truncate,
} from './provider.js';
import { defineProviderKind } from './provider-kind.js';

export interface FeishuProviderOptions {
  id: string;
  channel: Channel;
  /** The bot's webhook URL, `https://open.feishu.cn/open-apis/bot/v2/hook/<token>`. */
  webhookUrl: string;
  /** The signing secret from the bot's security settings; unsigned when absent. */
  signingSecret?: string;
  timeoutMs: number;
  clock: Clock;
  /** Resolves the vendor's host for a new connection (the process's bounded resolver); absent: `dns.lookup`. */
  lookup?: LookupFunction | undefined;
}

function feishuSign(timestampSeconds: number, secret: string): string {
  return createHmac('sha256', `${timestampSeconds}\n${secret}`).update('').digest('base64');
}

/** Feishu's answer code → is it the bot's settings that refuse (signature, IP allow-list, keywords)? */
export function isFeishuProviderFault(code: number): boolean {
  return code === 19021 || code === 19022 || code === 19024;
}

/** Feishu's answer code (and msg) → may a later attempt succeed? */
function isRetryableFeishuCode(code: number, msg: string): boolean {
  return code === 11232 || (code === 9499 && /too many/i.test(msg));
}

export function createFeishuProvider(options: FeishuProviderOptions): Provider {
  return {
    id: options.id,
    kind: 'feishu',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const text = message.subject ? `${message.subject}\n${message.body ?? ''}` : (message.body ?? '');
      const timestamp = Math.floor(options.clock.now() / 1000);
      const payload = {
        ...(options.signingSecret ? { timestamp: String(timestamp), sign: feishuSign(timestamp, options.signingSecret) } : {}),
        msg_type: 'text',
        content: { text },
      };
      const answer = await postOnce({
        providerId: options.id,
        url: options.webhookUrl,
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: JSON.stringify(payload),
        timeoutMs: options.timeoutMs,
        signal,
        lookup: options.lookup,
      });
      const json = parseJson(answer.text);
      // Older bots answer {StatusCode, StatusMessage}; newer ones {code, msg}. Both carry 0 for success.
      const code = isRecord(json)
        ? typeof json.code === 'number'
          ? json.code
          : typeof json.StatusCode === 'number'
            ? json.StatusCode
            : undefined
        : undefined;
      if (code === undefined) throw answerStatusError(options.id, answer, message.to);
      if (code === 0 && answer.status >= 200 && answer.status < 300) return { providerMessageId: `feishu-${message.id}` };
      const msg = isRecord(json) ? String(json.msg ?? json.StatusMessage ?? '') : '';
      throw new ProviderError(`provider ${options.id}: Feishu bot code ${code}: ${truncate(msg)}`, {
        retryable: isRetryableFeishuCode(code, msg) || isRetryableHttpStatus(answer.status),
        providerFault: isFeishuProviderFault(code) || isProviderFaultHttpStatus(answer.status),
        code: `FEISHU_${code}`,
        status: answer.status,
      });
    },
  };
}

/**
 * `feishu`: a Feishu (Lark) custom bot. Its hook URL carries the bot's token, so it is a secret;
 * rows stored when it was config still load, and show it masked, saying where it belongs.
 */
export const feishuKind = defineProviderKind({
  kind: 'feishu',
  channel: 'webhook',
  config: { required: [], optional: [] },
  secret: { required: ['webhookUrl'], optional: ['signingSecret'] },
  credentialRoute: ['webhookUrl'],
  listedConfig: (config) =>
    config.webhookUrl === undefined ? config : { ...config, webhookUrl: '*** (the bot token: move it to secret.webhookUrl)' },
  checkNew(read, id) {
    if (read.hasConfig('webhookUrl'))
      throw new Error(`provider "${id}" (feishu): the webhook URL carries the bot's token: give it as secret.webhookUrl, not config`);
  },
  build(read, { id, channel, clock, lookup }) {
    const signingSecret = read.optionalSecretString('signingSecret');
    const webhookUrl = read.hasConfig('webhookUrl') ? read.url('webhookUrl') : read.secretUrl('webhookUrl');
    return createFeishuProvider({
      id,
      channel,
      webhookUrl,
      timeoutMs: read.timeoutMs(),
      clock,
      lookup,
      ...(signingSecret === undefined ? {} : { signingSecret }),
    });
  },
});
