import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHANNELS, type Channel } from '../../src/core/channels.js';
import {
  EMAIL_PROVIDER_FORMS,
  normalizeEmail,
  normalizePhone,
  normalizeRecipient,
  normalizeWebhookTarget,
  readOnEveryChannel,
} from '../../src/core/recipients.js';

describe('recipient normalisation', () => {
  it('phones become E.164, read in the default region when they have no +country', () => {
    expect(normalizePhone('13800138000', 'CN')).toEqual({ ok: true, recipient: '+8613800138000', key: '+8613800138000', region: 'CN' });
    expect(normalizePhone('+86 138 0013 8000', 'US')).toMatchObject({ ok: true, recipient: '+8613800138000' });
    expect(normalizePhone('(415) 555-2671', 'US')).toMatchObject({ ok: true, recipient: '+14155552671' });
    expect(normalizePhone('12345', 'CN').ok).toBe(false);
    expect(normalizePhone('not a number', 'CN').ok).toBe(false);
  });

  it('emails are delivered with their local part as written and the domain lower-cased; odd forms are refused', () => {
    expect(normalizeEmail(' Alice.B+tag@Example.COM ')).toEqual({
      ok: true,
      recipient: 'Alice.B+tag@example.com',
      key: 'alice.b@example.com',
    });
    for (const bad of [
      'a@b',
      '@example.com',
      'a..b@example.com',
      '.a@example.com',
      'a@-x.com',
      'a@example.123',
      '"q"@example.com',
      `${'x'.repeat(65)}@example.com`,
    ]) {
      expect(normalizeEmail(bad).ok, bad).toBe(false);
    }
  });

  it('webhook targets are bot names or http(s) URLs', () => {
    expect(normalizeWebhookTarget('ops-alerts')).toEqual({ ok: true, recipient: 'ops-alerts', key: 'ops-alerts' });
    expect(normalizeWebhookTarget('https://Hooks.Example.com:443/x')).toMatchObject({ ok: true, recipient: 'https://hooks.example.com/x' });
    // 300 characters as written, 1,800 once percent-encoded: what is stored and counted must fit.
    const grown = normalizeWebhookTarget(`https://h.example.com/${'界'.repeat(278)}`);
    expect(grown).toEqual({ ok: false, reason: expect.stringContaining('once normalised (percent-encoded); at most 320') });
    expect(normalizeWebhookTarget(`https://h.example.com/${'a'.repeat(298)}`).ok).toBe(true);
    expect(normalizeWebhookTarget('ftp://example.com').ok).toBe(false);
    expect(normalizeWebhookTarget('has space').ok).toBe(false);
  });

  it('dispatches by channel', () => {
    expect(normalizeRecipient('sms', '13800138000', 'CN')).toMatchObject({ ok: true, recipient: '+8613800138000' });
    expect(normalizeRecipient('email', '13800138000', 'CN').ok).toBe(false);
  });

  // Every spelling in a row reaches one mailbox, number or hook: one key, so one count and one
  // blacklist entry. Delivery keeps the spelling (`recipient`, checked below).
  const SPELLINGS: [Channel, string, string[]][] = [
    [
      'email',
      'alice@example.com',
      ['alice@example.com', 'Alice@example.com', 'ALICE@EXAMPLE.COM', 'alice+1@example.com', ' Alice+news@Example.com '],
    ],
    ['email', 'bob@example.com', ['Bob@example.com', 'bob+x@example.com', 'BOB+X+Y@example.com']],
    // A `+` first is the name itself, not a tag.
    ['email', '+bob@example.com', ['+bob@example.com', '+Bob@Example.com']],
    // Dots count outside Gmail.
    ['email', 'a.b@example.com', ['a.b@example.com', 'A.B+z@example.com']],
    ['email', 'ab@example.com', ['ab@example.com']],
    [
      'email',
      'johndoe@gmail.com',
      ['johndoe@gmail.com', 'John.Doe@gmail.com', 'j.o.h.n.d.o.e+spam@Gmail.com', 'johndoe@googlemail.com', 'John.Doe+x@GoogleMail.com'],
    ],
    [
      'sms',
      '+8613800138002',
      ['13800138002', '138.0013.8002', '+86 138 0013 8002', '(+86) 13800138002', '＋８６ １３８ ００１３ ８００２', '+86-138-0013-8002'],
    ],
    ['webhook', 'ops-alerts', ['ops-alerts', 'OPS-ALERTS', ' Ops-Alerts ']],
    [
      'webhook',
      'https://hooks.example.com/x',
      [
        'https://hooks.example.com/x',
        'https://hooks.example.com/x#1',
        'https://hooks.example.com/%78',
        'https://hooks.example.com/x?',
        'HTTPS://Hooks.Example.COM:443/%78?#top',
      ],
    ],
    [
      'webhook',
      'https://hooks.example.com/a~b?q=A-1',
      ['https://hooks.example.com/a%7Eb?q=%41%2D1', 'https://hooks.example.com/a%7eb?q=A-1#f'],
    ],
    // Reserved characters stay escaped (`%2F` is not `/`), with their hex in one case.
    ['webhook', 'https://hooks.example.com/a%2Fb', ['https://hooks.example.com/a%2fb', 'https://hooks.example.com/a%2Fb']],
    // A decoded `.` segment is removed as the parser removes a written one.
    ['webhook', 'https://hooks.example.com/b', ['https://hooks.example.com/a/%2E%2E/b', 'https://hooks.example.com/a/../b']],
  ];

  it.each(SPELLINGS)('%s: every spelling of %s has that one key', (channel, key, spellings) => {
    for (const spelling of spellings) {
      const result = normalizeRecipient(channel, spelling, 'CN');
      expect(result, spelling).toMatchObject({ ok: true, key });
    }
  });

  it('keeps spellings that reach other recipients apart', () => {
    const keyOf = (channel: Channel, text: string) => {
      const result = normalizeRecipient(channel, text, 'CN');
      return result.ok ? result.key : result.reason;
    };
    expect(keyOf('email', 'a.b@example.com')).not.toBe(keyOf('email', 'ab@example.com'));
    expect(keyOf('email', 'bob@example.com')).not.toBe(keyOf('email', 'bob@example.org'));
    expect(keyOf('webhook', 'https://hooks.example.com/x?a=1')).not.toBe(keyOf('webhook', 'https://hooks.example.com/x'));
    expect(keyOf('webhook', 'https://hooks.example.com/X')).not.toBe(keyOf('webhook', 'https://hooks.example.com/x'));
    expect(keyOf('webhook', 'https://hooks.example.com/a%2Fb')).not.toBe(keyOf('webhook', 'https://hooks.example.com/a/b'));
  });

  it('delivers to the address as written: only the domain or host is tidied', () => {
    expect(normalizeEmail('John.Doe+x@GoogleMail.com')).toMatchObject({ recipient: 'John.Doe+x@googlemail.com', key: 'johndoe@gmail.com' });
    expect(normalizeWebhookTarget('OPS-ALERTS')).toMatchObject({ recipient: 'OPS-ALERTS', key: 'ops-alerts' });
    expect(normalizeWebhookTarget('https://Hooks.Example.com/%78?#1')).toMatchObject({
      recipient: 'https://hooks.example.com/%78?#1',
      key: 'https://hooks.example.com/x',
    });
  });

  it('a text for every channel is read by each channel that accepts it', () => {
    const read = (text: string) => readOnEveryChannel(text, 'CN').map(({ channel, key }) => [channel, key]);
    expect(read('138.0013.8002')).toEqual([
      ['sms', '+8613800138002'],
      ['webhook', '138.0013.8002'],
    ]);
    expect(read('13800138002')).toEqual([
      ['sms', '+8613800138002'],
      ['webhook', '13800138002'],
    ]);
    expect(read('(+86) 13800138004')).toEqual([['sms', '+8613800138004']]);
    expect(read('＋８６ １３８００１３８００５')).toEqual([['sms', '+8613800138005']]);
    expect(read('Bob+x@Example.com')).toEqual([['email', 'bob@example.com']]);
    expect(read('OPS-ALERTS')).toEqual([['webhook', 'ops-alerts']]);
    expect(read('not a recipient')).toEqual([]);
    // Without a region only numbers with +country are phone numbers.
    expect(readOnEveryChannel('138.0013.8002', undefined).map((reading) => reading.channel)).toEqual(['webhook']);
  });

  it("keys of different channels never coincide (what lets one '*' entry hold each channel's key)", () => {
    const texts = SPELLINGS.flatMap(([, key, spellings]) => [key, ...spellings]).concat([
      '13800138002',
      '+8613800138002',
      'a:b',
      'https://u@h.example.com/',
    ]);
    const owner = new Map<string, Channel>();
    for (const text of texts) {
      for (const { channel, key } of readOnEveryChannel(text, 'CN')) {
        expect(owner.get(key) ?? channel, `${key} from ${text}`).toBe(channel);
        owner.set(key, channel);
        // And each channel's key is read back by no other channel.
        for (const other of CHANNELS.filter((c) => c !== channel)) {
          const result = normalizeRecipient(other, key, 'CN');
          if (result.ok) expect(result.key, `${key} as ${other}`).not.toBe(key);
        }
      }
    }
  });

  it('docs/api.md lists every mail provider form', () => {
    const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    for (const domain of Object.keys(EMAIL_PROVIDER_FORMS)) expect(docs, domain).toContain(`\`${domain}\``);
  });
});
