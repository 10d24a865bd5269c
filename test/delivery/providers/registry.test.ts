import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../src/delivery/providers/provider.js';
import { createProvider, type ProviderSpec } from '../../../src/delivery/providers/registry.js';

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
  feishu: { kind: 'feishu', channel: 'webhook', config: { webhookUrl: 'https://open.feishu.cn/open-apis/bot/v2/hook/x' }, secret: {} },
  slack: { kind: 'slack', channel: 'webhook', config: {}, secret: { webhookUrl: 'https://hooks.slack.com/services/T/B/X' } },
  http: { kind: 'http', channel: 'webhook', config: { url: 'https://receiver.example.com/hook' }, secret: { signingSecret: 'whsec' } },
};

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
    ['feishu', { config: {} }, 'config.webhookUrl is required'],
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
  });
});
