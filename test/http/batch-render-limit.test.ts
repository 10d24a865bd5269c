/** A batch's rendered texts are bounded as a whole (SLUICE_BATCH_RENDER_LIMIT_BYTES), whatever its request's size. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support.js';

let t: TestApp;
const LIMIT = 65_536;
const phone = (n: number) => `+861360013${String(n).padStart(4, '0')}`;

beforeAll(async () => {
  t = await startApp({ SLUICE_BATCH_RENDER_LIMIT_BYTES: String(LIMIT) });
});
afterAll(() => t.close());

describe('a batch of rendered messages', () => {
  it('refuses with 413 the messages whose rendering would take the batch past the bound; the others are admitted', async () => {
    const tenant = await t.createTenant();
    // 8 copies of a 1,024-byte param: 8,192 bytes a message, so 8 messages fill 65,536 bytes exactly.
    const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/promo`, {
      params: { p: { type: 'string' } },
      body: '{{p}}'.repeat(8),
    });
    expect(put.statusCode, put.body).toBe(200);
    const recipients = Array.from({ length: 10 }, (_, i) => ({ to: phone(i) }));
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/messages/batch',
      headers: { authorization: `Bearer ${tenant.apiKey}` },
      payload: { channel: 'sms', template: 'promo', params: { p: 'x'.repeat(1024) }, recipients },
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    const results = response.json().results as { status?: string; error?: { code: string; limit?: number } }[];
    expect(results.filter((result) => result.status === 'queued')).toHaveLength(8);
    const refused = results.filter((result) => result.error);
    expect(refused).toHaveLength(2);
    for (const result of refused) expect(result.error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', limit: LIMIT });
  });

  it('gives every batch its own bound, and a single send none', async () => {
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/templates/sms/promo`, {
      params: { p: { type: 'string' } },
      body: '{{p}}'.repeat(32),
    });
    const body = { channel: 'sms', template: 'promo', params: { p: 'y'.repeat(1024) }, recipients: [{ to: phone(20) }, { to: phone(21) }] };
    for (let round = 0; round < 2; round++) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/messages/batch',
        headers: { authorization: `Bearer ${tenant.apiKey}` },
        payload: body,
      });
      expect(response.json().results.map((result: { status?: string }) => result.status)).toEqual(['queued', 'queued']);
    }
    for (let n = 0; n < 3; n++) {
      const sent = await t.send(tenant.apiKey, { channel: 'sms', to: phone(30 + n), template: 'promo', params: { p: 'z'.repeat(1024) } });
      expect(sent.statusCode, sent.body.slice(0, 200)).toBe(202);
    }
  });
});
