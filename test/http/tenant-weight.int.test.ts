/**
 * A tenant's send weight through the admin API, on every database: 1 by default, 1 to 100 on
 * create and patch, anything else a 400 naming `sendWeight`, and the tenant view answers it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectError, startApp, type TestApp } from '../http/support.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

for (const backend of backends) {
  describeWith(backend.available, backend.variable, `tenant send weight on ${backend.name}`, () => {
    let database: { url: string; drop(): Promise<void> };
    let t: TestApp;
    beforeAll(async () => {
      database = await backend.create();
      t = await startApp({ SLUICE_DB_URL: database.url });
    });
    afterAll(async () => {
      await t?.close();
      await database?.drop();
    });

    const read = async (id: string) => {
      const response = await t.admin('GET', `/v1/admin/tenants/${id}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json() as { sendWeight: number };
    };

    it('is 1 by default, set on create, changed by a patch, and listed', async () => {
      const plain = await t.createTenant(`plain-${backend.name}`);
      expect((await read(plain.id)).sendWeight).toBe(1);

      const created = await t.admin('POST', '/v1/admin/tenants', { name: `heavy-${backend.name}`, sendWeight: 100 });
      expect(created.statusCode, created.body).toBe(201);
      const heavy = created.json() as { id: string };
      expect((await read(heavy.id)).sendWeight).toBe(100);

      const patched = await t.admin('PATCH', `/v1/admin/tenants/${plain.id}`, { sendWeight: 3 });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({ id: plain.id, sendWeight: 3, qpsLimit: null });
      expect((await read(plain.id)).sendWeight).toBe(3);
      // Another field's patch leaves it alone.
      expect((await t.admin('PATCH', `/v1/admin/tenants/${plain.id}`, { qpsLimit: 5 })).json()).toMatchObject({
        sendWeight: 3,
        qpsLimit: 5,
      });

      const listed = (await t.admin('GET', '/v1/admin/tenants')).json() as { tenants: { id: string; sendWeight: number }[] };
      expect(Object.fromEntries(listed.tenants.map((tenant) => [tenant.id, tenant.sendWeight]))).toEqual({
        [plain.id]: 3,
        [heavy.id]: 100,
      });
      expect(Object.fromEntries(await t.runtime.repositories.tenants.sendWeights())).toEqual({ [plain.id]: 3, [heavy.id]: 100 });
    });

    it('refuses anything but an integer from 1 to 100 with a 400 naming sendWeight, and stores nothing', async () => {
      const tenant = await t.createTenant(`bounded-${backend.name}`);
      for (const sendWeight of [0, 101, -1, 1.5, '2', null, true, 1e9]) {
        const error = expectError(await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { sendWeight }), 400, 'INVALID_REQUEST');
        expect(error.message).toContain('sendWeight');
        const refused = await t.admin('POST', '/v1/admin/tenants', { name: `refused-${backend.name}`, sendWeight });
        expect(expectError(refused, 400, 'INVALID_REQUEST').message).toContain('sendWeight');
      }
      expect((await read(tenant.id)).sendWeight).toBe(1);
      expect((await t.admin('GET', '/v1/admin/tenants')).body).not.toContain(`refused-${backend.name}`);
      for (const sendWeight of [1, 100]) {
        const response = await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { sendWeight });
        expect(response.json()).toMatchObject({ sendWeight });
      }
    });
  });
}
