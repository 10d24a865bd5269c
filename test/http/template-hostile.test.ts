/**
 * Templates and their params against hostile input: markup through a param, a pattern that
 * backtracks, a template that multiplies its params, a name that reaches a string's prototype.
 * Versions stored before these checks existed are put straight into SQL, as an upgrade finds them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredTemplateSpec } from '../../src/storage/repositories/templates.js';
import { startApp, type TestApp } from './support.js';

let t: TestApp;
let tenant: { id: string; apiKey: string };
const phone = (n: number) => `+861370013${String(n).padStart(4, '0')}`;
const put = (channel: string, name: string, spec: unknown) =>
  t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/${channel}/${name}`, spec);
/** A version as an older sluice stored it, without today's checks. */
const storeUnchecked = (channel: 'sms' | 'email', name: string, spec: Record<string, unknown>) =>
  t.runtime.repositories.templates.put(tenant.id, channel, name, spec as StoredTemplateSpec);
const payloadOf = async (id: string) => {
  await t.runtime.repositories.messages.drain();
  return (await t.runtime.repositories.messages.findById(tenant.id, id))!.payload;
};
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(1)>';

beforeAll(async () => {
  t = await startApp();
  tenant = await t.createTenant();
});
afterAll(() => t.close());

describe('markup through a param', () => {
  it('refuses {{{name}}}, {{& name}} and a delimiter change in html when a template is stored', async () => {
    for (const html of ['<p>{{{name}}}</p>', '<p>{{& name}}</p>', '{{=<% %>=}}<p><%{name}%></p>', '{{=<% %>=}}<p><%name%></p>']) {
      const response = await put('email', 'unescaped', { params: { name: { type: 'string' } }, subject: 'Hi', html });
      expect(response.statusCode, html).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'html' });
    }
    // Plain text has nothing to escape: the same tags in `body` are stored.
    expect(
      (await put('email', 'plain', { params: { name: { type: 'string' } }, subject: 'Hi', body: '{{{name}}} {{& name}}' })).statusCode,
    ).toBe(200);
  });

  it('renders every tag of an html stored before the check escaped', async () => {
    await storeUnchecked('email', 'legacy-html', {
      params: { name: { type: 'string' } },
      subject: 'Hi {{{name}}}',
      html: '<p>{{{name}}}</p><p>{{& name}}</p>{{=<% %>=}}<p><%{name}%></p>',
    });
    const sent = await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', template: 'legacy-html', params: { name: HOSTILE } });
    expect(sent.statusCode, sent.body).toBe(202);
    const { html, subject } = await payloadOf(sent.json().id);
    const escaped = '&lt;script&gt;alert(1)&lt;&#x2F;script&gt;&lt;img src&#x3D;x onerror&#x3D;alert(1)&gt;';
    expect(html).toBe(`<p>${escaped}</p><p>${escaped}</p><p>${escaped}</p>`);
    expect(subject).toBe(`Hi ${HOSTILE}`);
  });

  it("refuses a name that is not exactly a declared param: a dotted path reaches the string's prototype", async () => {
    const texts = ['{{code.length}}', '{{#code.__proto__.repeat}}3{{/code.__proto__.repeat}}', '{{#code}}{{.}}{{/code}}'];
    for (const body of texts) {
      const response = await put('sms', 'dotted', { params: { code: { type: 'string' } }, body });
      expect(response.statusCode, body).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
    }
    // Stored by an older sluice: the send is refused, and String.prototype.repeat never runs.
    await storeUnchecked('sms', 'legacy-dotted', {
      params: { code: { type: 'string' } },
      body: '{{#code.__proto__.repeat}}3{{/code.__proto__.repeat}}',
    });
    const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(1), template: 'legacy-dotted', params: { code: '1' } });
    expect(sent.statusCode, sent.body).toBe(400);
    expect(sent.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'template' });
  });
});

describe('parsing a template', () => {
  it('refuses a long run of whitespace before Mustache parses it (its tag scanner is quadratic in one)', async () => {
    const response = await put('email', 'spaces', {
      params: { a: { type: 'string' } },
      subject: 'S',
      html: `{{a${' '.repeat(60_000)}b`,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'html' });
    expect(response.json().error.message).toMatch(/whitespace/);
    // Indentation and blank lines are far shorter than the bound.
    const html = `<table>${'\n        <tr><td>{{a}}</td></tr>'.repeat(100)}\n${' '.repeat(1000)}</table>`;
    expect((await put('email', 'spaces', { params: { a: { type: 'string' } }, subject: 'S', html })).statusCode).toBe(200);
  });
});

describe("a param's pattern", () => {
  it('matches in linear time: ^(a+)+$ against 32 "a"s and a "!" (minutes with a backtracking engine)', async () => {
    expect((await put('sms', 'redos', { params: { code: { type: 'string', pattern: '^(a+)+$' } }, body: '{{code}}' })).statusCode).toBe(
      200,
    );
    const hostile = await t.send(tenant.apiKey, {
      channel: 'sms',
      to: phone(2),
      template: 'redos',
      params: { code: `${'a'.repeat(32)}!` },
    });
    expect(hostile.statusCode, hostile.body).toBe(400);
    expect(hostile.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'params.code' });
    const fine = await t.send(tenant.apiKey, { channel: 'sms', to: phone(2), template: 'redos', params: { code: 'aaaa' } });
    expect(fine.statusCode, fine.body).toBe(202);
  });

  it('is RE2 syntax: lookaround and backreferences are refused when stored, ECMAScript escapes are taken', async () => {
    for (const pattern of ['^(?=\\d)\\d+$', '^(a)\\1$', '(?<!x)y']) {
      const response = await put('sms', 'syntax', { params: { code: { type: 'string', pattern } }, body: '{{code}}' });
      expect(response.statusCode, pattern).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'params.code.pattern' });
    }
    expect(
      (await put('sms', 'syntax', { params: { code: { type: 'string', pattern: '^\\u0041\\d{2}$' } }, body: '{{code}}' })).statusCode,
    ).toBe(200);
    const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(3), template: 'syntax', params: { code: 'A12' } });
    expect(sent.statusCode, sent.body).toBe(202);
  });

  it("is refused when its size times the param's maxLength passes the bound; a maxLength brings it under", async () => {
    const costly = { type: 'string', pattern: '^(?:.?){30}.{30}$' };
    const refused = await put('sms', 'costly', { params: { code: costly }, body: '{{code}}' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'params.code.pattern' });
    expect(refused.json().error.message).toMatch(/maxLength/);
    expect((await put('sms', 'costly', { params: { code: { ...costly, maxLength: 60 } }, body: '{{code}}' })).statusCode).toBe(200);
  });

  it('stored by an older sluice in a syntax RE2 refuses: the send is refused naming the template', async () => {
    await storeUnchecked('sms', 'legacy-pattern', { params: { code: { type: 'string', pattern: '^(?=\\d)\\d+$' } }, body: '{{code}}' });
    const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(4), template: 'legacy-pattern', params: { code: '12' } });
    expect(sent.statusCode, sent.body).toBe(400);
    expect(sent.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'template' });
    expect(sent.json().error.message).toMatch(/legacy-pattern/);
  });
});

describe('rendered size', () => {
  it("refuses a render past the channel's inline limit: {{p}} × 6,500 with a 1,024-character p is not stored", async () => {
    const body = '{{p}}'.repeat(6500);
    expect((await put('sms', 'amplifier', { params: { p: { type: 'string' } }, body })).statusCode).toBe(200);
    const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(5), template: 'amplifier', params: { p: 'x'.repeat(1024) } });
    expect(sent.statusCode, sent.body.slice(0, 200)).toBe(400);
    expect(sent.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'body', limit: 32_768 });
    // Up to the limit is fine: 32 copies of 1,024 characters are exactly 32,768.
    expect((await put('sms', 'amplifier', { params: { p: { type: 'string' } }, body: '{{p}}'.repeat(32) })).statusCode).toBe(200);
    const fits = await t.send(tenant.apiKey, { channel: 'sms', to: phone(5), template: 'amplifier', params: { p: 'x'.repeat(1024) } });
    expect(fits.statusCode, fits.body.slice(0, 200)).toBe(202);
    expect((await payloadOf(fits.json().id)).body).toHaveLength(32_768);
  });

  it('counts html after escaping: a param that escapes past the limit is refused', async () => {
    const html = '{{p}}'.repeat(11);
    expect((await put('email', 'escaped-size', { params: { p: { type: 'string' } }, subject: 'S', html })).statusCode).toBe(200);
    // 1,024 `"` escape to 6,144 characters; 11 of them are 67,584, past html's 65,536.
    const sent = await t.send(tenant.apiKey, {
      channel: 'email',
      to: 'a@example.com',
      template: 'escaped-size',
      params: { p: '"'.repeat(1024) },
    });
    expect(sent.statusCode, sent.body.slice(0, 200)).toBe(400);
    expect(sent.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'html', limit: 65_536 });
  });
});
