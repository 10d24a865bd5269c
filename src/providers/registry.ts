/**
 * Builds a Provider from its stored row: `{id, kind, channel, config, secret}`. `config` holds the
 * plain settings (shown by the admin API), `secret` the credentials (stored encrypted, never shown).
 * A missing or malformed field fails here, at load time, with an Error naming the provider and the
 * field (`provider "sms-main" (aliyun-sms): config.signName is required`), never the value.
 *
 * | kind          | channel        | config                                                                  | secret                     |
 * |---------------|----------------|-------------------------------------------------------------------------|----------------------------|
 * | `console`     | any            | —                                                                       | —                          |
 * | `smtp`        | email          | host, from; port (587, or 465 when secure), secure, messageIdDomain, ignoreTLS, requireTLS, tlsRejectUnauthorized, maxConnections | user, password (optional) |
 * | `aliyun-sms`  | sms            | signName; templateCode, endpoint, regionId                              | accessKeyId, accessKeySecret |
 * | `tencent-sms` | sms            | sdkAppId; signName, templateId, region, endpoint                        | secretId, secretKey        |
 * | `feishu`      | webhook        | —                                                                       | webhookUrl; signingSecret (optional) |
 * | `slack`       | webhook        | —                                                                       | webhookUrl                 |
 * | `http`        | webhook        | url                                                                     | signingSecret              |
 *
 * Every kind also takes `config.timeoutMs` (per request, default 10 000).
 */
import type { Channel } from '../core/channels.js';
import { type Clock, systemClock } from '../limiter/clock.js';
import { createAliyunSmsProvider } from './aliyun-sms.js';
import { createConsoleProvider, type LineSink } from './console.js';
import { createFeishuProvider } from './feishu.js';
import { createHttpWebhookProvider } from './http-webhook.js';
import { PROVIDER_KINDS, type Provider, type ProviderKind } from './provider.js';
import { ProviderConfigReader } from './provider-config.js';
import { createSlackProvider } from './slack.js';
import { createSmtpProvider } from './smtp.js';
import { createTencentSmsProvider } from './tencent-sms.js';

export interface ProviderSpec {
  id: string;
  kind: ProviderKind | string;
  channel: Channel;
  config: Record<string, unknown>;
  secret: Record<string, string>;
}

/** What the process supplies rather than the stored row. */
export interface ProviderDependencies {
  /** Signing timestamps (Tencent, Aliyun, Feishu, http). */
  clock?: Clock;
  /** The console provider's output (stdout by default). */
  consoleOut?: LineSink;
}

/** The channel each kind can send on; `console` serves any. */
const KIND_CHANNEL: Record<ProviderKind, Channel | undefined> = {
  console: undefined,
  smtp: 'email',
  'aliyun-sms': 'sms',
  'tencent-sms': 'sms',
  feishu: 'webhook',
  slack: 'webhook',
  http: 'webhook',
};

const isProviderKind = (kind: string): kind is ProviderKind => (PROVIDER_KINDS as readonly string[]).includes(kind);

export function createProvider(spec: ProviderSpec, deps: ProviderDependencies = {}): Provider {
  return build(spec, deps, readerFor(spec));
}

/**
 * What the admin API and the CLI run before storing a provider: {@link createProvider}'s checks,
 * and also no field the kind does not read, so a misspelt `timeOutMs` is refused instead of
 * silently leaving the default. (Loading a stored row stays lenient: a row written by hand or by
 * another build must not stop its channel.) Throws an Error naming the provider and the fields.
 */
export function checkProviderSpec(spec: ProviderSpec): void {
  const read = readerFor(spec);
  // Credentials that earlier builds took as plain config are refused there now, so they are sealed.
  if (spec.kind === 'feishu' && read.hasConfig('webhookUrl')) {
    throw new Error(`provider "${spec.id}" (feishu): the webhook URL carries the bot's token: give it as secret.webhookUrl, not config`);
  }
  const client = build(spec, {}, read);
  void client.close?.();
  const unread = read.unreadFields();
  if (unread.length > 0) {
    throw new Error(
      `provider "${spec.id}" (${spec.kind}): ${unread.join(', ')} ${unread.length === 1 ? 'is' : 'are'} not read by this kind (misspelt, another kind's, or needing another field)`,
    );
  }
}

function readerFor(spec: ProviderSpec): ProviderConfigReader {
  if (typeof spec.id !== 'string' || spec.id === '') throw new Error('provider: id is required (a non-empty string)');
  if (!isProviderKind(spec.kind))
    throw new Error(`provider "${spec.id}": unknown kind "${String(spec.kind)}" (one of ${PROVIDER_KINDS.join(', ')})`);
  const kind = spec.kind;
  const expected = KIND_CHANNEL[kind];
  if (expected !== undefined && spec.channel !== expected) {
    throw new Error(`provider "${spec.id}" (${kind}): channel must be "${expected}", not "${String(spec.channel)}"`);
  }
  return new ProviderConfigReader(spec.id, kind, spec.config ?? {}, spec.secret ?? {});
}

/** The client of a checked spec (`readerFor` has checked the id, kind and channel). */
function build(spec: ProviderSpec, deps: ProviderDependencies, read: ProviderConfigReader): Provider {
  const kind = spec.kind as ProviderKind;
  const clock = deps.clock ?? systemClock;
  const common = { id: spec.id, channel: spec.channel };

  switch (kind) {
    case 'console':
      read.timeoutMs(); // every kind takes it; printing has nothing to wait for
      return createConsoleProvider({ ...common, ...(deps.consoleOut ? { out: deps.consoleOut } : {}) });
    case 'smtp': {
      const secure = read.optionalBoolean('secure') ?? false;
      const user = read.optionalSecretString('user');
      const messageIdDomain = read.optionalString('messageIdDomain');
      const ignoreTLS = read.optionalBoolean('ignoreTLS');
      const requireTLS = read.optionalBoolean('requireTLS');
      const tlsRejectUnauthorized = read.optionalBoolean('tlsRejectUnauthorized');
      const maxConnections = read.optionalInteger('maxConnections', { min: 1, max: 100 });
      return createSmtpProvider({
        ...common,
        host: read.string('host'),
        port: read.optionalInteger('port', { min: 1, max: 65_535 }) ?? (secure ? 465 : 587),
        secure,
        from: read.string('from'),
        timeoutMs: read.timeoutMs(),
        ...(user === undefined ? {} : { auth: { user, pass: read.secretString('password') } }),
        ...(messageIdDomain === undefined ? {} : { messageIdDomain }),
        ...(ignoreTLS === undefined ? {} : { ignoreTLS }),
        ...(requireTLS === undefined ? {} : { requireTLS }),
        ...(tlsRejectUnauthorized === undefined ? {} : { tlsRejectUnauthorized }),
        ...(maxConnections === undefined ? {} : { maxConnections }),
      });
    }
    case 'aliyun-sms': {
      const templateCode = read.optionalString('templateCode');
      const endpoint = read.optionalUrl('endpoint');
      const regionId = read.optionalString('regionId');
      return createAliyunSmsProvider({
        ...common,
        accessKeyId: read.secretString('accessKeyId'),
        accessKeySecret: read.secretString('accessKeySecret'),
        signName: read.string('signName'),
        timeoutMs: read.timeoutMs(),
        clock,
        ...(templateCode === undefined ? {} : { defaultTemplateCode: templateCode }),
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(regionId === undefined ? {} : { regionId }),
      });
    }
    case 'tencent-sms': {
      const signName = read.optionalString('signName');
      const templateId = read.optionalString('templateId');
      const region = read.optionalString('region');
      const endpoint = read.optionalUrl('endpoint');
      return createTencentSmsProvider({
        ...common,
        secretId: read.secretString('secretId'),
        secretKey: read.secretString('secretKey'),
        sdkAppId: read.string('sdkAppId'),
        timeoutMs: read.timeoutMs(),
        clock,
        ...(signName === undefined ? {} : { signName }),
        ...(templateId === undefined ? {} : { defaultTemplateId: templateId }),
        ...(region === undefined ? {} : { region }),
        ...(endpoint === undefined ? {} : { endpoint }),
      });
    }
    case 'feishu': {
      const signingSecret = read.optionalSecretString('signingSecret');
      // The hook URL carries the bot's token: a secret. Rows stored when it was config still load.
      const webhookUrl = read.hasConfig('webhookUrl') ? read.url('webhookUrl') : read.secretUrl('webhookUrl');
      return createFeishuProvider({
        ...common,
        webhookUrl,
        timeoutMs: read.timeoutMs(),
        clock,
        ...(signingSecret === undefined ? {} : { signingSecret }),
      });
    }
    case 'slack':
      return createSlackProvider({ ...common, webhookUrl: read.secretUrl('webhookUrl'), timeoutMs: read.timeoutMs() });
    case 'http':
      return createHttpWebhookProvider({
        ...common,
        url: read.url('url'),
        signingSecret: read.secretString('signingSecret'),
        timeoutMs: read.timeoutMs(),
        clock,
      });
  }
}
