/** GET /v1/admin/tenants: a page at a time by id, `next` to the following page, like the blacklist's list. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, startApp, type TestApp } from './support.js';

let t: TestApp;
const created: string[] = [];

beforeAll(async () => {
  t = await startApp();
  for (let i = 0; i < 150; i++) created.push((await t.createTenant(`listed-${i}`)).id);
});
afterAll(async () => {
  await t?.close();
});

const list = async (query = '') => {
  const response = await t.admin('GET', `/v1/admin/tenants${query}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { tenants: { id: string; name: string }[]; next: string | null };
};

describe('GET /v1/admin/tenants', () => {
  it('answers 100 tenants by default with a `next`; following it reaches every tenant once, the last page with next null', async () => {
    const first = await list();
    expect(first.tenants).toHaveLength(100);
    expect(first.next).not.toBeNull();
    const second = await list(`?after=${encodeURIComponent(first.next!)}`);
    expect(second.tenants).toHaveLength(50);
    expect(second.next).toBeNull();
    expect([...first.tenants, ...second.tenants].map((tenant) => tenant.id)).toEqual([...created].sort());
  });

  it('limit sets the page size, 1 to 1000', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const page = await list(`?limit=40${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
      expect(page.tenants.length).toBeLessThanOrEqual(40);
      seen.push(...page.tenants.map((tenant) => tenant.id));
      after = page.next;
      pages++;
    } while (after !== null);
    expect(pages).toBe(4);
    expect(seen).toEqual([...created].sort());
    expect((await list('?limit=1000')).tenants).toHaveLength(150);
    for (const limit of ['0', '1001', '-1', 'ten', '1.5'])
      expectError(await t.admin('GET', `/v1/admin/tenants?limit=${limit}`), 400, 'INVALID_REQUEST');
  });

  it('refuses a query parameter it does not take, as every admin route does', async () => {
    const id = created[0]!;
    for (const url of [
      '/v1/admin/tenants?foo=1',
      '/v1/admin/tenants?limit=10&page=2',
      `/v1/admin/tenants/${id}?foo=1`,
      `/v1/admin/tenants/${id}/keys?foo=1`,
      `/v1/admin/tenants/${id}/rules/sms?foo=1`,
    ]) {
      expectError(await t.admin('GET', url), 400, 'INVALID_REQUEST');
    }
  });
});
