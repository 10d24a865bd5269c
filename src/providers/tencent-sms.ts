/**
 * Tencent Cloud SMS `SendSms`, API version 2021-01-11, signed with TC3-HMAC-SHA256
 * (tencent-signature.ts). The signing clock is injected (`clock`), so a request is reproducible.
 *
 * The sluice message id goes in `SessionContext`, which Tencent echoes in the answer and in
 * delivery receipts.
 *
 * Answers (always HTTP 200 from Tencent): `Response.SendStatusSet[0].Code == "Ok"` → its
 * `SerialNo`. Retryable: `LimitExceeded.*` (per-number and per-app frequency limits),
 * `RequestLimitExceeded*` (API QPS), `InternalError*` and HTTP 429/5xx. Everything else
 * (`InvalidParameter*`, `FailedOperation.*`, `AuthFailure.*`, `UnauthorizedOperation.*`) is permanent.
 *
 * Receipts (status callback): a JSON array of `{user_receive_time, nationcode, mobile,
 * report_status: SUCCESS|FAIL, errmsg, description, sid}` with times in China time, answered
 * `{"result":0,"errmsg":"OK"}`. `sid` is the `SerialNo` a send stored.
 */
import type { LookupFunction } from 'node:net';
import type { Channel } from '../core/channels.js';
import type { Clock } from '../limiter/clock.js';
import { answerStatusError, isRecord, parseJson, postOnce } from './http-request.js';
import { maskRecipient, scrubRecipient } from './mask.js';
import {
  httpStatusError,
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
import { tc3Sign } from './tencent-signature.js';

const TENCENT_SMS_DEFAULT_ENDPOINT = 'https://sms.tencentcloudapi.com';
const CONTENT_TYPE = 'application/json; charset=utf-8';

export interface TencentSmsProviderOptions {
  id: string;
  channel: Channel;
  secretId: string;
  secretKey: string;
  /** The SMS application (SmsSdkAppId). */
  sdkAppId: string;
  /** The approved signature (签名); required by Tencent for mainland numbers. */
  signName?: string;
  /** Used when a message names no template. */
  defaultTemplateId?: string;
  region?: string;
  endpoint?: string;
  timeoutMs: number;
  /** The source of X-TC-Timestamp (and so of the signature's date). */
  clock: Clock;
  /** Resolves the vendor's host for a new connection (the process's bounded resolver); absent: `dns.lookup`. */
  lookup?: LookupFunction | undefined;
}

/** Tencent's error code → is it this account that is refused (another provider may succeed)? */
export function isTencentProviderFault(code: string): boolean {
  return (
    code.startsWith('AuthFailure') ||
    code.startsWith('UnauthorizedOperation') ||
    code === 'FailedOperation.InsufficientBalanceInSmsPackage' ||
    code === 'FailedOperation.SignatureIncorrectOrUnapproved'
  );
}

/** Tencent's error code → may a later attempt succeed? */
function isRetryableTencentCode(code: string): boolean {
  return code.startsWith('LimitExceeded') || code.startsWith('RequestLimitExceeded') || code.startsWith('InternalError');
}

export function createTencentSmsProvider(options: TencentSmsProviderOptions): Provider {
  const endpoint = options.endpoint ?? TENCENT_SMS_DEFAULT_ENDPOINT;
  const host = new URL(endpoint).host;
  return {
    id: options.id,
    kind: 'tencent-sms',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const vendor = vendorTemplateFor(message, { id: options.id, kind: 'tencent-sms' });
      const templateId = vendor?.templateCode ?? message.template ?? options.defaultTemplateId;
      const signName = vendor?.signName ?? options.signName;
      const params = message.params ?? {};
      // Tencent templates take positional parameters ({1}, {2}...): the vendor entry's order, else the params' own.
      const positional = (vendor?.paramOrder ? vendor.paramOrder.map((name) => params[name] ?? '') : Object.values(params)).map(String);
      if (!templateId) {
        throw new ProviderError(`provider ${options.id}: message ${message.id} names no template and no default templateId is configured`, {
          retryable: false,
          code: 'NO_TEMPLATE',
        });
      }
      const payload = JSON.stringify({
        PhoneNumberSet: [message.to],
        SmsSdkAppId: options.sdkAppId,
        ...(signName ? { SignName: signName } : {}),
        TemplateId: templateId,
        ...(positional.length > 0 ? { TemplateParamSet: positional } : {}),
        SessionContext: message.id,
      });
      const timestamp = Math.floor(options.clock.now() / 1000);
      const signed = tc3Sign({
        secretId: options.secretId,
        secretKey: options.secretKey,
        service: 'sms',
        host,
        contentType: CONTENT_TYPE,
        action: 'SendSms',
        timestamp,
        payload,
      });
      const answer = await postOnce({
        providerId: options.id,
        url: endpoint,
        headers: {
          Authorization: signed.authorization,
          'Content-Type': CONTENT_TYPE,
          'X-TC-Action': 'SendSms',
          'X-TC-Version': '2021-01-11',
          'X-TC-Timestamp': String(timestamp),
          'X-TC-Region': options.region ?? 'ap-guangzhou',
        },
        body: payload,
        timeoutMs: options.timeoutMs,
        signal,
        lookup: options.lookup,
      });
      const json = parseJson(answer.text);
      const response = isRecord(json) && isRecord(json.Response) ? json.Response : undefined;
      if (!response) throw answerStatusError(options.id, answer, message.to);

      const failure = (code: string, vendorMessage: unknown): ProviderError =>
        new ProviderError(
          `provider ${options.id}: Tencent SendSms ${code} for ${maskRecipient(message.to)}: ${truncate(scrubRecipient(String(vendorMessage ?? ''), message.to))}`,
          {
            retryable: isRetryableTencentCode(code) || isRetryableHttpStatus(answer.status),
            providerFault: isTencentProviderFault(code),
            code,
            status: answer.status,
          },
        );
      if (isRecord(response.Error)) throw failure(String(response.Error.Code ?? 'UnknownError'), response.Error.Message);
      const status = Array.isArray(response.SendStatusSet) && isRecord(response.SendStatusSet[0]) ? response.SendStatusSet[0] : undefined;
      if (!status)
        throw httpStatusError(options.id, answer.status >= 300 ? answer.status : 502, { detail: 'answer without SendStatusSet' });
      if (status.Code !== 'Ok') throw failure(String(status.Code ?? 'UnknownError'), status.Message);
      const serialNo = typeof status.SerialNo === 'string' && status.SerialNo ? status.SerialNo : undefined;
      const requestId = typeof response.RequestId === 'string' ? response.RequestId : undefined;
      return { providerMessageId: serialNo ?? requestId ?? `tencent-${message.id}` };
    },
  };
}

/** Tencent's status callback: `report_status` is the verdict, `errmsg` the code (`DELIVRD`, `UNDELIV`...). */
const tencentReceipts: ReceiptFormat = {
  name: 'Tencent status callback',
  read(entry, now) {
    const id = receiptText(entry.sid);
    const status = receiptText(entry.report_status);
    if (!id || (status !== 'SUCCESS' && status !== 'FAIL')) return undefined;
    return {
      providerMessageId: id,
      delivered: status === 'SUCCESS',
      code: receiptText(entry.errmsg) ?? '',
      at: chinaTime(entry.user_receive_time, now),
    };
  },
  answer: { result: 0, errmsg: 'OK' },
};

/** `tencent-sms`: SMS through Tencent Cloud's SendSms API (v3 signing). */
export const tencentSmsKind = defineProviderKind({
  kind: 'tencent-sms',
  channel: 'sms',
  config: { required: ['sdkAppId'], optional: ['signName', 'templateId', 'region', 'endpoint'] },
  secret: { required: ['secretId', 'secretKey'], optional: [] },
  credentialRoute: ['endpoint'],
  receipts: tencentReceipts,
  build(read, { id, channel, clock, lookup }) {
    const signName = read.optionalString('signName');
    const templateId = read.optionalString('templateId');
    const region = read.optionalString('region');
    const endpoint = read.optionalUrl('endpoint');
    return createTencentSmsProvider({
      id,
      channel,
      secretId: read.secretString('secretId'),
      secretKey: read.secretString('secretKey'),
      sdkAppId: read.string('sdkAppId'),
      timeoutMs: read.timeoutMs(),
      clock,
      lookup,
      ...(signName === undefined ? {} : { signName }),
      ...(templateId === undefined ? {} : { defaultTemplateId: templateId }),
      ...(region === undefined ? {} : { region }),
      ...(endpoint === undefined ? {} : { endpoint }),
    });
  },
});
