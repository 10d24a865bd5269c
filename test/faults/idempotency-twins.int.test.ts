/**
 * Idempotency-Key twins sent at once to two sluice processes on one PostgreSQL and one Redis (the
 * black-box finding: one 202 and one 429, then a ban, 5 runs of 5): every twin gets the first's
 * answer, one message is stored, and the recipient is not banned.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith, servers } from '../support/servers.js';
import { type Service, startService } from './fault-support.js';

const ADMIN = 'twins-admin-token-of-24-chars';
const database = `sluice_twins_${process.pid}`;
let services: Service[] = [];
let tenant: { id: string; apiKey: string };

const dbUrl = () => {
  const url = new URL(servers.pgUrl!);
  url.pathname = `/${database}`;
  return url.toString();
};

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: servers.pgUrl });
  await client.connect();
  await client.query(text);
  await client.end();
}

describeWith(
  servers.pgUrl && servers.redisUrl,
  'SLUICE_TEST_PG_URL and SLUICE_TEST_REDIS_URL',
  'Idempotency-Key twins on two instances',
  () => {
    beforeAll(async () => {
      await adminQuery(`CREATE DATABASE ${database}`);
      const env = {
        SLUICE_DB_URL: dbUrl(),
        SLUICE_REDIS_URL: servers.redisUrl!,
        SLUICE_REDIS_KEY_PREFIX: `twins${process.pid}:`,
        SLUICE_SECRET_KEY: Buffer.alloc(32, 7).toString('base64'),
        SLUICE_ADMIN_TOKEN: ADMIN,
      };
      services = [await startService(env), await startService(env)];
      const admin = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
      const created = await fetch(`${services[0]!.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"twins"}' });
      tenant = (await created.json()) as { id: string; apiKey: string };
      const rules = await fetch(`${services[0]!.base}/v1/admin/tenants/${tenant.id}/rules/sms`, {
        method: 'PUT',
        headers: admin,
        body: JSON.stringify({ rules: [{ windowSeconds: 60, limit: 1, banSeconds: 600 }] }),
      });
      expect(rules.status).toBe(200);
    }, 60_000);

    afterAll(async () => {
      await Promise.all(services.map((service) => service.stop()));
      await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    });

    it('4 twins over two instances, 10 rounds: one 202, three 200 with its id, one row, no ban', async () => {
      for (let round = 0; round < 10; round++) {
        const to = `+86135001352${String(round).padStart(2, '0')}`;
        const send = (service: Service) =>
          fetch(`${service.base}/v1/messages`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': `otp-${round}` },
            body: JSON.stringify({ channel: 'sms', to, body: 'b' }),
          }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id?: string } }));
        const answers = await Promise.all([0, 1, 2, 3].map((n) => send(services[n % 2]!)));
        const statuses = answers.map((answer) => answer.status).sort();
        expect(statuses, JSON.stringify(answers)).toEqual([200, 200, 200, 202]);
        expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
        const lift = await fetch(`${services[1]!.base}/v1/admin/tenants/${tenant.id}/bans/sms/${encodeURIComponent(to)}`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${ADMIN}` },
        });
        expect(await lift.json()).toEqual({ lifted: false });
      }
      const client = new pg.Client({ connectionString: dbUrl() });
      await client.connect();
      const stored = await client.query('SELECT count(*)::int AS n FROM messages');
      await client.end();
      expect(stored.rows[0].n).toBe(10);
    }, 60_000);
  },
);
