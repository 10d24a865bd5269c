/**
 * Aliyun SMS (dysmsapi 2017-05-25) `SendSms`, RPC style, signed with HMAC-SHA1 (aliyun-signature.ts).
 *
 * The sluice message id goes in `OutId`, Aliyun's caller-side correlation field: it comes back in
 * delivery receipts and lets a duplicate from a retried attempt be recognised.
 *
 * Answers: `Code: "OK"` → the `BizId`. Throttling (`isv.BUSINESS_LIMIT_CONTROL`, the per-number
 * minute/hour/day flow control, and `Throttling.*`) and Aliyun's own faults (`isp.SYSTEM_ERROR`,
 * `ServiceUnavailable`, HTTP 5xx) are retryable; every other code (`isv.*` invalid parameters,
 * template or signature problems, bad credentials) is permanent.
 *
 * Receipts (`SmsReport`, HTTP batch push): a JSON array of `{phone_number, send_time, report_time,
 * success, err_code, err_msg, sms_size, biz_id, out_id}` with times in China time, answered
 * `{"code":0,"msg":"接收成功"}`. `biz_id` is the `BizId` a send stored.
 */
import { randomUUID } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/clock.js';
import { aliyunCanonicalQuery, aliyunPercentEncode, aliyunSignature, aliyunTimestamp } from './aliyun-signature.js';
import { answerStatusError, isRecord, parseJson, postOnce } from './http-request.js';
import { maskRecipient, scrubRecipient } from './mask.js';
import {
  isRetryableHttpStatus,
  type OutboundMessage,
  type Provider,
  ProviderError,
  type SendResult,
  truncate,
  vendorTemplateFor,
} from './provider.js';
import { defineProviderKind } from './provider-kind.js';
import { chinaTime, type ReceiptFormat, receiptText } from './receipt.js';

const ALIYUN_SMS_DEFAULT_ENDPOINT = 'https://dysmsapi.aliyuncs.com';

export interface AliyunSmsProviderOptions {
  id: string;
  channel: Channel;
  accessKeyId: string;
  accessKeySecret: string;
  /** The approved signature name (签名) shown in the SMS. */
  signName: string;
  /** Used when a message names no template. */
  defaultTemplateCode?: string;
  endpoint?: string;
  regionId?: string;
  timeoutMs: number;
  clock: Clock;
  /** Resolves the vendor's host for a new connection (the process's bounded resolver); absent: `dns.lookup`. */
  lookup?: LookupFunction | undefined;
  /** SignatureNonce source (a UUID by default); injectable so tests can pin a request. */
  nonce?: () => string;
}

const RETRYABLE_CODES = new Set([
  'isv.BUSINESS_LIMIT_CONTROL',
  'isp.SYSTEM_ERROR',
  'ServiceUnavailable',
  'InternalError',
  'SignatureNonceUsed',
]);

/** Codes that refuse the account or its settings (key, signature, balance, sign name), not the message. */
const PROVIDER_FAULT_CODES = new Set([
  'SignatureDoesNotMatch',
  'isv.ACCOUNT_NOT_EXISTS',
  'isv.ACCOUNT_ABNORMAL',
  'isv.OUT_OF_SERVICE',
  'isv.AMOUNT_NOT_ENOUGH',
  'isv.SMS_SIGNATURE_ILLEGAL',
  'isv.SMS_SIGN_ILLEGAL',
]);

/** Aliyun's answer code → is it this account that is refused (another provider may succeed)? */
export function isAliyunProviderFault(code: string): boolean {
  return PROVIDER_FAULT_CODES.has(code) || code.startsWith('InvalidAccessKeyId') || code.startsWith('Forbidden');
}

/** Aliyun's answer code → may a later attempt succeed? */
function isRetryableAliyunCode(code: string): boolean {
  return RETRYABLE_CODES.has(code) || code.startsWith('Throttling');
}

export function createAliyunSmsProvider(options: AliyunSmsProviderOptions): Provider {
  const endpoint = options.endpoint ?? ALIYUN_SMS_DEFAULT_ENDPOINT;
  const nonce = options.nonce ?? randomUUID;
  return {
    id: options.id,
    kind: 'aliyun-sms',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const vendor = vendorTemplateFor(message, { id: options.id, kind: 'aliyun-sms' });
      const templateCode = vendor?.templateCode ?? message.template ?? options.defaultTemplateCode;
      if (!templateCode) {
        throw new ProviderError(
          `provider ${options.id}: message ${message.id} names no template and no default templateCode is configured`,
          {
            retryable: false,
            code: 'NO_TEMPLATE',
          },
        );
      }
      const params: Record<string, string> = {
        AccessKeyId: options.accessKeyId,
        Action: 'SendSms',
        Format: 'JSON',
        RegionId: options.regionId ?? 'cn-hangzhou',
        SignatureMethod: 'HMAC-SHA1',
        SignatureNonce: nonce(),
        SignatureVersion: '1.0',
        Timestamp: aliyunTimestamp(options.clock.now()),
        Version: '2017-05-25',
        // Aliyun reads mainland numbers with or without 86, international ones as country code + number, no `+`.
        PhoneNumbers: message.to.replace(/^\+/, ''),
        SignName: vendor?.signName ?? options.signName,
        TemplateCode: templateCode,
        OutId: message.id,
      };
      if (message.params && Object.keys(message.params).length > 0) params.TemplateParam = JSON.stringify(message.params);
      const signature = aliyunSignature('POST', params, options.accessKeySecret);
      const answer = await postOnce({
        providerId: options.id,
        url: endpoint,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: `${aliyunCanonicalQuery(params)}&Signature=${aliyunPercentEncode(signature)}`,
        timeoutMs: options.timeoutMs,
        signal,
        lookup: options.lookup,
      });
      const json = parseJson(answer.text);
      const code = isRecord(json) && typeof json.Code === 'string' ? json.Code : undefined;
      if (code === 'OK' && answer.status >= 200 && answer.status < 300) {
        const bizId = isRecord(json) && typeof json.BizId === 'string' && json.BizId ? json.BizId : undefined;
        const requestId = isRecord(json) && typeof json.RequestId === 'string' ? json.RequestId : undefined;
        return { providerMessageId: bizId ?? requestId ?? `aliyun-${message.id}` };
      }
      if (code === undefined) throw answerStatusError(options.id, answer, message.to);
      const vendorMessage = isRecord(json) && typeof json.Message === 'string' ? json.Message : '';
      throw new ProviderError(
        `provider ${options.id}: Aliyun SendSms ${code} for ${maskRecipient(message.to)}: ${truncate(scrubRecipient(vendorMessage, message.to))}`,
        {
          retryable: isRetryableAliyunCode(code) || isRetryableHttpStatus(answer.status),
          providerFault: isAliyunProviderFault(code),
          code,
          status: answer.status,
        },
      );
    },
  };
}

/** Aliyun's `SmsReport` push: `success` is the verdict, `err_code` the code (`DELIVERED` when delivered). */
const aliyunReceipts: ReceiptFormat = {
  name: 'Aliyun SmsReport',
  read(entry, now) {
    const id = receiptText(entry.biz_id);
    if (!id || typeof entry.success !== 'boolean') return undefined;
    return {
      providerMessageId: id,
      delivered: entry.success,
      code: receiptText(entry.err_code) ?? '',
      at: chinaTime(entry.report_time, now),
    };
  },
  answer: { code: 0, msg: '接收成功' },
};

/** `aliyun-sms`: SMS through Alibaba Cloud's SendSms API. */
export const aliyunSmsKind = defineProviderKind({
  kind: 'aliyun-sms',
  channel: 'sms',
  config: { required: ['signName'], optional: ['templateCode', 'endpoint', 'regionId'] },
  secret: { required: ['accessKeyId', 'accessKeySecret'], optional: [] },
  credentialRoute: ['endpoint'],
  receipts: aliyunReceipts,
  build(read, { id, channel, clock, lookup }) {
    const templateCode = read.optionalString('templateCode');
    const endpoint = read.optionalUrl('endpoint');
    const regionId = read.optionalString('regionId');
    return createAliyunSmsProvider({
      id,
      channel,
      accessKeyId: read.secretString('accessKeyId'),
      accessKeySecret: read.secretString('accessKeySecret'),
      signName: read.string('signName'),
      timeoutMs: read.timeoutMs(),
      clock,
      lookup,
      ...(templateCode === undefined ? {} : { defaultTemplateCode: templateCode }),
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(regionId === undefined ? {} : { regionId }),
    });
  },
});
