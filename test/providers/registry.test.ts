import { describe, expect, it } from 'vitest';
import { PROVIDER_KINDS, providerKind } from '../../src/providers/kinds.js';
import type { Channel } from '../../src/providers/provider.js';
import {
  checkProviderSpec,
  createProvider,
  credentialRouteFields,
  listedProviderConfig,
  type ProviderSpec,
} from '../../src/providers/registry.js';

const VALID: Record<string, Omit<ProviderSpec, 'id'>> = {
  console: { kind: 'console', channel: 'sms', config: {}, secret: {} },
  smtp: {
    kind: 'smtp',
    channel: 'email',
    config: { host: 'smtp.example.com', from: 'noreply@example.com' },
    secret: { user: 'u', password: 'p' },
  },
  'aliyun-sms': {
    kind: 'aliyun-sms',
    channel: 'sms',
    config: { signName: 'Sluice' },
    secret: { accessKeyId: 'id', accessKeySecret: 's3cr3t-aliyun' },
  },
  'tencent-sms': {
    kind: 'tencent-sms',
    channel: 'sms',
    config: { sdkAppId: '1400000000' },
    secret: { secretId: 'id', secretKey: 's3cr3t-tencent' },
  },
  feishu: { kind: 'feishu', channel: 'webhook', config: {}, secret: { webhookUrl: 'https://open.feishu.cn/open-apis/bot/v2/hook/x' } },
  slack: { kind: 'slack', channel: 'webhook', config: {}, secret: { webhookUrl: 'https://hooks.slack.com/services/T/B/X' } },
  http: { kind: 'http', channel: 'webhook', config: { url: 'https://receiver.example.com/hook' }, secret: { signingSecret: 'whsec' } },
};

/** Every field the kinds' descriptors declare, per kind: the strict check must take them all. */
const EVERY_FIELD: Record<string, Omit<ProviderSpec, 'id'>> = {
  console: { kind: 'console', channel: 'email', config: { timeoutMs: 100 }, secret: {} },
  smtp: {
    kind: 'smtp',
    channel: 'email',
    config: {
      host: 'h',
      from: 'a@b.c',
      port: 25,
      secure: false,
      messageIdDomain: 'b.c',
      ignoreTLS: true,
      requireTLS: false,
      tlsRejectUnauthorized: true,
      maxConnections: 2,
      timeoutMs: 100,
    },
    secret: { user: 'u', password: 'p' },
  },
  'aliyun-sms': {
    kind: 'aliyun-sms',
    channel: 'sms',
    config: { signName: 'S', templateCode: 'T', endpoint: 'https://dysmsapi.aliyuncs.com', regionId: 'cn-hangzhou', timeoutMs: 100 },
    secret: { accessKeyId: 'id', accessKeySecret: 'k' },
  },
  'tencent-sms': {
    kind: 'tencent-sms',
    channel: 'sms',
    config: {
      sdkAppId: '1',
      signName: 'S',
      templateId: '2',
      region: 'ap-guangzhou',
      endpoint: 'https://sms.tencentcloudapi.com',
      timeoutMs: 100,
    },
    secret: { secretId: 'id', secretKey: 'k' },
  },
  feishu: {
    kind: 'feishu',
    channel: 'webhook',
    config: { timeoutMs: 100 },
    secret: { webhookUrl: 'https://x.example.com', signingSecret: 's' },
  },
  slack: { kind: 'slack', channel: 'webhook', config: { timeoutMs: 100 }, secret: { webhookUrl: 'https://hooks.slack.com/x' } },
  http: { kind: 'http', channel: 'webhook', config: { url: 'https://r.example.com', timeoutMs: 100 }, secret: { signingSecret: 's' } },
};

describe('checkProviderSpec (before a provider is stored)', () => {
  it.each(Object.entries(EVERY_FIELD))('takes every documented field of %s', (kind, spec) => {
    expect(() => checkProviderSpec({ id: `p-${kind}`, ...spec })).not.toThrow();
  });

  it.each([
    ['http', { config: { url: 'https://r.example.com', timeOutMs: 100 } }, 'config.timeOutMs is not read'],
    ['smtp', { secret: { password: 'p' } }, 'secret.password is not read'],
    ['console', { config: { url: 'https://r.example.com' }, secret: { token: 't' } }, 'config.url, secret.token are not read'],
  ])('%s: refuses %j (%s), which loading a stored row lets pass', async (kind, override, expected) => {
    const spec = { id: 'odd', ...EVERY_FIELD[kind]!, ...override } as ProviderSpec;
    expect(() => checkProviderSpec(spec)).toThrow(`provider "odd" (${kind}): ${expected}`);
    const loaded = createProvider(spec);
    await loaded.close?.();
  });

  it("refuses a Feishu hook URL given as config (it carries the bot's token), which a stored row may still have", async () => {
    const old = {
      id: 'old-bot',
      kind: 'feishu',
      channel: 'webhook' as const,
      config: { webhookUrl: 'https://x.example.com/hook/t0ken' },
      secret: {},
    };
    expect(() => checkProviderSpec(old)).toThrow('give it as secret.webhookUrl, not config');
    const loaded = createProvider(old);
    expect(loaded.kind).toBe('feishu');
  });

  it('still refuses what createProvider refuses', () => {
    expect(() => checkProviderSpec({ id: 'bad', ...VALID.http!, config: {} })).toThrow('config.url is required');
  });
});

describe('createProvider', () => {
  it.each(Object.entries(VALID))('builds a %s provider', async (kind, spec) => {
    const provider = createProvider({ id: `p-${kind}`, ...spec });
    expect([provider.id, provider.kind, provider.channel]).toEqual([`p-${kind}`, kind, spec.channel]);
    await provider.close?.();
  });

  it.each([
    ['smtp', { config: { from: 'a@b.c' } }, 'config.host is required'],
    ['smtp', { config: { host: 'h' } }, 'config.from is required'],
    ['smtp', { secret: { user: 'u' } }, 'secret.password is required'],
    ['smtp', { config: { host: 'h', from: 'a@b.c', port: 'x' } }, 'config.port must be an integer'],
    ['aliyun-sms', { config: {} }, 'config.signName is required'],
    ['aliyun-sms', { secret: { accessKeyId: 'id' } }, 'secret.accessKeySecret is required'],
    ['aliyun-sms', { config: { signName: 'S', endpoint: 'ftp://x' } }, 'config.endpoint must be an http(s) URL'],
    ['tencent-sms', { config: {} }, 'config.sdkAppId is required'],
    ['tencent-sms', { secret: { secretKey: 'k' } }, 'secret.secretId is required'],
    ['feishu', { secret: {} }, 'secret.webhookUrl is required'],
    ['slack', { secret: {} }, 'secret.webhookUrl is required'],
    ['http', { config: {} }, 'config.url is required'],
    ['http', { secret: {} }, 'secret.signingSecret is required'],
    ['http', { config: { url: 'https://r.example.com', timeoutMs: 0 } }, 'config.timeoutMs must be an integer'],
  ])('%s: %j fails naming the field (%s)', (kind, override, expected) => {
    const spec = { id: 'bad', ...VALID[kind]!, ...override } as ProviderSpec;
    expect(() => createProvider(spec)).toThrow(`provider "bad" (${kind}): ${expected}`);
  });

  it('never echoes a secret value in a validation error', () => {
    const spec = { id: 'bad', ...VALID.slack!, secret: { webhookUrl: 'not a url but a s3cr3t' } };
    expect(() => createProvider(spec)).toThrow(/secret\.webhookUrl must be an http\(s\) URL/);
    try {
      createProvider(spec);
    } catch (error) {
      expect(String(error)).not.toContain('s3cr3t');
    }
  });

  it('refuses a kind on the wrong channel and an unknown kind', () => {
    expect(() => createProvider({ id: 'x', ...VALID.smtp!, channel: 'sms' as Channel })).toThrow(
      'provider "x" (smtp): channel must be "email", not "sms"',
    );
    expect(() => createProvider({ id: 'x', ...VALID.console!, kind: 'pigeon' })).toThrow('unknown kind "pigeon"');
  });

  it('console prints the recipient and body on one line and answers console-<id>', async () => {
    const lines: string[] = [];
    const provider = createProvider({ id: 'demo', ...VALID.console! }, { consoleOut: { write: (chunk: string) => lines.push(chunk) } });
    const result = await provider.send({ id: 'm1', tenantId: 't1', channel: 'sms', to: '+8613812340000', body: 'Your code is 1234' });
    expect(result).toEqual({ providerMessageId: 'console-m1' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('[sluice sms] id=m1 tenant=t1 to=+8613812340000 body="Your code is 1234"\n');
    // An email rendered from a template shows its subject, text and HTML parts.
    await provider.send({
      id: 'm2',
      tenantId: 't1',
      channel: 'email',
      to: 'a@example.com',
      subject: 'Hi',
      body: 'Hi Ann',
      html: '<p>Hi Ann</p>',
    });
    expect(lines[1]).toBe('[sluice email] id=m2 tenant=t1 to=a@example.com subject="Hi" body="Hi Ann" html="<p>Hi Ann</p>"\n');
  });
});

describe('the kind table', () => {
  it('has a valid example and a full one for each kind, and nothing else', () => {
    expect(Object.keys(VALID).sort()).toEqual([...PROVIDER_KINDS].sort());
    expect(Object.keys(EVERY_FIELD).sort()).toEqual([...PROVIDER_KINDS].sort());
  });

  it.each(PROVIDER_KINDS.map((kind) => [kind]))('%s declares the fields its builder reads, timeoutMs aside', (kind) => {
    const descriptor = providerKind(kind)!;
    const full = EVERY_FIELD[kind]!;
    const declared = (fields: { required: readonly string[]; optional: readonly string[] }) =>
      [...fields.required, ...fields.optional].sort();
    expect(declared(descriptor.config)).toEqual(
      Object.keys(full.config)
        .filter((field) => field !== 'timeoutMs')
        .sort(),
    );
    expect(declared(descriptor.secret)).toEqual(Object.keys(full.secret).sort());
    for (const field of descriptor.config.required) {
      const { [field]: _, ...rest } = full.config;
      expect(() => checkProviderSpec({ id: 'p', ...full, config: rest })).toThrow(`config.${field} is required`);
    }
    for (const field of descriptor.secret.required) {
      const { [field]: _, ...rest } = full.secret;
      expect(() => checkProviderSpec({ id: 'p', ...full, secret: rest })).toThrow(`secret.${field} is required`);
    }
  });

  it("names as credential routes only config fields of the kind (Feishu's: the hook URL older builds stored as config)", () => {
    for (const kind of PROVIDER_KINDS) {
      const config = [...providerKind(kind)!.config.required, ...providerKind(kind)!.config.optional];
      const extra = credentialRouteFields(kind).filter((field) => !config.includes(field));
      expect(extra).toEqual(kind === 'feishu' ? ['webhookUrl'] : []);
    }
    expect(credentialRouteFields('pigeon')).toEqual([]);
  });

  it('lists a config as stored, but a Feishu hook URL stored as config masked', () => {
    const config = { url: 'https://r.example.com', timeoutMs: 100 };
    expect(listedProviderConfig('http', config)).toBe(config);
    expect(listedProviderConfig('pigeon', config)).toBe(config);
    expect(listedProviderConfig('feishu', { webhookUrl: 'https://x.example.com/hook/t0ken' }).webhookUrl).not.toContain('t0ken');
  });
});
