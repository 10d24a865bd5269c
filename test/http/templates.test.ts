import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

let t: TestApp;
let tenant: { id: string; apiKey: string };
const phone = (n: number) => `+861380013${String(n).padStart(4, '0')}`;
const otp = {
  params: { code: { type: 'string', pattern: '^\\d{4,8}$' }, minutes: { type: 'number', maxLength: 3 } },
  body: 'Your code is {{code}}, valid {{minutes}} min',
  vendor: {
    'aliyun-sms': { templateCode: 'SMS_001', signName: 'Shop' },
    'tencent-sms': { templateCode: '1001', paramOrder: ['code', 'minutes'] },
  },
};
const payloadOf = async (id: string) => {
  await t.runtime.repositories.messages.drain();
  return (await t.runtime.repositories.messages.findById(tenant.id, id))!.payload;
};

beforeAll(async () => {
  t = await startApp();
  tenant = await t.createTenant();
});
afterAll(() => t.close());

describe('templates', () => {
  it('each PUT is a new version; GET lists them; sends pin the current one', async () => {
    const first = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/otp`, otp);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().version).toBe(1);

    const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(1), template: 'otp', params: { code: '1234', minutes: '5' } });
    expect(sent.statusCode, sent.body).toBe(202);

    const second = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/otp`, {
      ...otp,
      body: 'Code {{code}} ({{minutes}} min)',
    });
    expect(second.json().version).toBe(2);
    const versions = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/templates/sms/otp`)).json().versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);

    // The first message keeps version 1's text; a new one gets version 2.
    const pinned = await payloadOf(sent.json().id);
    expect(pinned.stored).toEqual({ name: 'otp', version: 1 });
    expect(pinned.body).toBe('Your code is 1234, valid 5 min');
    expect(pinned.template).toBeUndefined();
    expect(pinned.vendor?.['aliyun-sms']?.templateCode).toBe('SMS_001');
    const shown = (await t.call(tenant.apiKey, 'GET', `/v1/messages/${sent.json().id}`)).json();
    expect(shown).toMatchObject({ template: { name: 'otp', version: 1 }, priority: 'transactional' });
    const later = await t.send(tenant.apiKey, { channel: 'sms', to: phone(2), template: 'otp', params: { code: '5678', minutes: 10 } });
    expect(later.statusCode, later.body).toBe(202);
    const latest = await payloadOf(later.json().id);
    expect(latest).toMatchObject({
      stored: { name: 'otp', version: 2 },
      body: 'Code 5678 (10 min)',
      params: { code: '5678', minutes: '10' },
    });
  });

  it('refuses missing, unknown and invalid params with 400 naming the param', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ code: '1234' }, 'params.minutes'],
      [{ code: '1234', minutes: '5', extra: 'x' }, 'params.extra'],
      [{ code: '12', minutes: '5' }, 'params.code'],
      [{ code: '1234', minutes: 'five' }, 'params.minutes'],
      [{ code: '1234', minutes: '1000' }, 'params.minutes'],
    ];
    for (const [params, field] of cases) {
      const response = await t.send(tenant.apiKey, { channel: 'sms', to: phone(3), template: 'otp', params });
      expect(response.statusCode, JSON.stringify(params)).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', field });
    }
  });

  it('a template name with no stored template is a 404 on every channel; a vendor code is vendorTemplate, passed through', async () => {
    const missing = await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', template: 'welcome', params: { x: '1' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('NOT_FOUND');
    // A misspelled stored name on SMS is refused, not sent with no text as a vendor code.
    const misspelled = await t.send(tenant.apiKey, { channel: 'sms', to: phone(4), template: 'nope', params: { code: '1' } });
    expect(misspelled.statusCode, misspelled.body).toBe(404);
    expect(misspelled.json().error).toMatchObject({ code: 'NOT_FOUND', field: 'template' });
    expect(misspelled.json().error.message).toContain('vendorTemplate');
    const passThrough = await t.send(tenant.apiKey, { channel: 'sms', to: phone(4), vendorTemplate: 'SMS_999', params: { code: '1' } });
    expect(passThrough.statusCode, passThrough.body).toBe(202);
    expect(await payloadOf(passThrough.json().id)).toMatchObject({ template: 'SMS_999', params: { code: '1' } });
    // One of the two, and a vendor code only on SMS.
    const both = await t.send(tenant.apiKey, { channel: 'sms', to: phone(4), template: 'otp', vendorTemplate: 'SMS_999' });
    expect([both.statusCode, both.json().error.field]).toEqual([400, 'vendorTemplate']);
    const onEmail = await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', vendorTemplate: 'T1', subject: 's', body: 'b' });
    expect([onEmail.statusCode, onEmail.json().error.field]).toEqual([400, 'vendorTemplate']);
  });

  it('a campaign names a stored template or a vendor template, one of them', async () => {
    const batch = (body: Record<string, unknown>) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/messages/batch',
        headers: { authorization: `Bearer ${tenant.apiKey}` },
        payload: { channel: 'sms', recipients: [{ to: phone(5), params: { code: '7' } }], ...body },
      });
    const vendor = await batch({ vendorTemplate: 'SMS_777' });
    expect(vendor.statusCode, vendor.body).toBe(200);
    const [result] = vendor.json().results as { id: string }[];
    expect(await payloadOf(result!.id)).toMatchObject({ template: 'SMS_777', params: { code: '7' } });
    const misspelled = await batch({ template: 'nope' });
    expect(misspelled.json().results[0].error.code).toBe('NOT_FOUND');
    for (const body of [{}, { template: 'otp', vendorTemplate: 'SMS_777' }]) {
      const refused = await batch(body);
      expect([refused.statusCode, refused.json().error.code], JSON.stringify(body)).toEqual([400, 'INVALID_REQUEST']);
    }
  });

  it('escapes HTML in html, renders subject and body verbatim', async () => {
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/email/welcome`, {
      params: { name: { type: 'string', maxLength: 50 } },
      subject: 'Hello {{name}}',
      body: 'Hi {{name}}',
      html: '<p>Hi {{name}}</p>',
    });
    expect(put.statusCode, put.body).toBe(200);
    const sent = await t.send(tenant.apiKey, {
      channel: 'email',
      to: 'b@example.com',
      template: 'welcome',
      params: { name: '<b>Tom & "Jerry"</b>' },
    });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(await payloadOf(sent.json().id)).toMatchObject({
      subject: 'Hello <b>Tom & "Jerry"</b>',
      body: 'Hi <b>Tom & "Jerry"</b>',
      html: '<p>Hi &lt;b&gt;Tom &amp; &quot;Jerry&quot;&lt;&#x2F;b&gt;</p>',
    });
    const withBody = await t.send(tenant.apiKey, {
      channel: 'email',
      to: 'b@example.com',
      template: 'welcome',
      params: { name: 'x' },
      body: 'mine',
    });
    expect(withBody.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'body' });
  });

  it('refuses a template using an undeclared param, a partial, or a bad pattern', async () => {
    const bad = [
      [{ params: {}, body: 'Hi {{who}}' }, 'body'],
      [{ params: {}, body: 'Hi {{> other}}' }, 'body'],
      [{ params: { a: { type: 'string', pattern: '(' } }, body: '{{a}}' }, 'params.a.pattern'],
      [{ params: {} }, 'body'],
    ] as const;
    for (const [spec, field] of bad) {
      const response = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/bad`, spec);
      expect(response.statusCode, JSON.stringify(spec)).toBe(400);
      expect(response.json().error.field).toBe(field);
    }
  });

  it('DELETE retires: sends then fail (email) and a later PUT makes a new live version', async () => {
    expect((await t.admin('DELETE', `/v1/admin/tenants/${tenant.id}/templates/email/welcome`)).statusCode).toBe(200);
    const send = () => t.send(tenant.apiKey, { channel: 'email', to: 'c@example.com', template: 'welcome', params: { name: 'x' } });
    expect((await send()).statusCode).toBe(404);
    const listed = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/templates`)).json().templates;
    expect(listed.map((v: { name: string }) => v.name)).toEqual(['otp']);
    const again = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/email/welcome`, {
      params: { name: { type: 'string' } },
      subject: 'S',
      body: 'B {{name}}',
    });
    expect(again.json().version).toBe(2);
    expect((await send()).statusCode).toBe(202);
  });

  it("another tenant cannot use a tenant's template", async () => {
    const other = await t.createTenant();
    const response = await t.send(other.apiKey, { channel: 'email', to: 'd@example.com', template: 'welcome', params: { name: 'x' } });
    expect(response.statusCode).toBe(404);
  });
});
