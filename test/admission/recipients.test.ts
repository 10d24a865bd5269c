import { describe, expect, it } from 'vitest';
import { normalizeEmail, normalizePhone, normalizeRecipient, normalizeWebhookTarget } from '../../src/admission/recipients.js';

describe('recipient normalisation', () => {
  it('phones become E.164, read in the default region when they have no +country', () => {
    expect(normalizePhone('13800138000', 'CN')).toEqual({ ok: true, recipient: '+8613800138000' });
    expect(normalizePhone('+86 138 0013 8000', 'US')).toEqual({ ok: true, recipient: '+8613800138000' });
    expect(normalizePhone('(415) 555-2671', 'US')).toEqual({ ok: true, recipient: '+14155552671' });
    expect(normalizePhone('12345', 'CN').ok).toBe(false);
    expect(normalizePhone('not a number', 'CN').ok).toBe(false);
  });

  it('emails keep their local part and lower-case their domain; odd forms are refused', () => {
    expect(normalizeEmail(' Alice.B+tag@Example.COM ')).toEqual({ ok: true, recipient: 'Alice.B+tag@example.com' });
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
    expect(normalizeWebhookTarget('ops-alerts')).toEqual({ ok: true, recipient: 'ops-alerts' });
    expect(normalizeWebhookTarget('https://Hooks.Example.com:443/x')).toEqual({ ok: true, recipient: 'https://hooks.example.com/x' });
    // 300 characters as written, 1,800 once percent-encoded: what is stored and counted must fit.
    const grown = normalizeWebhookTarget(`https://h.example.com/${'界'.repeat(278)}`);
    expect(grown).toEqual({ ok: false, reason: expect.stringContaining('once normalised (percent-encoded); at most 320') });
    expect(normalizeWebhookTarget(`https://h.example.com/${'a'.repeat(298)}`).ok).toBe(true);
    expect(normalizeWebhookTarget('ftp://example.com').ok).toBe(false);
    expect(normalizeWebhookTarget('has space').ok).toBe(false);
  });

  it('dispatches by channel', () => {
    expect(normalizeRecipient('sms', '13800138000', 'CN')).toEqual({ ok: true, recipient: '+8613800138000' });
    expect(normalizeRecipient('email', '13800138000', 'CN').ok).toBe(false);
  });
});
