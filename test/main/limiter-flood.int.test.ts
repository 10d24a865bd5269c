/**
 * Issue 33's snapshot flood against a real server on SQLite and on PostgreSQL: one tenant makes
 * 8,000 risk checks, each on a new subject of 256 lone surrogates with a long action and request
 * id (about 2.5 KB of JSON each once escaped as \udXXX, 20 MB in all), then another tenant's number
 * is banned. The server stops (its snapshot saved) and another starts on its database: the ban
 * holds. Before, the save refused the whole state as too large, and the restart forgot the ban.
 */
import { afterAll, expect, it } from 'vitest';
import { createRuntime } from '../../src/main/runtime.js';
import { type Service, startRoles } from '../../src/main/service.js';
import { loadSettings } from '../../src/settings/settings.js';
import { silentConsole, tempDir, testEnv } from '../delivery/delivery-support.js';
import { backends } from '../support/databases.js';
import { describeWith } from '../support/servers.js';

const temp = tempDir();
afterAll(() => temp.cleanup());

const send = async (service: Service, apiKey: string, to: string) => {
  const response = await fetch(`${service.address}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ channel: 'sms', to, body: 'code 1234' }),
  });
  const body = (await response.json()) as { error?: { code: string } };
  return response.status === 202 ? 'accepted' : (body.error?.code ?? String(response.status));
};

for (const backend of backends.filter((candidate) => candidate.name !== 'mysql')) {
  describeWith(backend.available, backend.variable, `the limiter snapshot after a flood of long subjects (${backend.name})`, () => {
    it("keeps a victim's ban made after another tenant's flood across a restart", async () => {
      const database = await backend.create();
      /** `serve --roles api` on the database, without Redis. */
      const serve = async (): Promise<Service> => {
        const env = testEnv(temp.dir, undefined, {
          SLUICE_DB_URL: database.url,
          SLUICE_HOST: '127.0.0.1',
          SLUICE_PORT: '0',
          SLUICE_ROLES: 'api',
        });
        return startRoles(await createRuntime(loadSettings(env, undefined)), { fallbackProvider: silentConsole() });
      };
      try {
        const first = await serve();
        const attacker = await first.services.tenants.createTenant('flood-attacker');
        const victim = await first.services.tenants.createTenant('flood-victim');
        const check = async (n: number) => {
          const response = await fetch(`${first.address}/v1/frequency/check`, {
            method: 'POST',
            headers: { authorization: `Bearer ${attacker.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              subject: `${n}`.padEnd(256, '\ud800'),
              action: 'a'.repeat(64),
              requestId: `${n}`.padEnd(128, '\udbff'),
              rules: [{ windowSeconds: 31 * 86_400, limit: 1 }],
            }),
          });
          expect(response.status).toBe(200);
        };
        for (let n = 0; n < 8_000; n += 40) await Promise.all(Array.from({ length: 40 }, (_, i) => check(n + i)));
        // The seed rules (SLUICE_NEW_TENANT_RULES): 3 a minute, a breach bans the number 10 minutes.
        const banned = '+8613800000011';
        for (let i = 0; i < 3; i++) expect(await send(first, victim.apiKey, banned)).toBe('accepted');
        expect(await send(first, victim.apiKey, banned)).toBe('RATE_LIMITED');
        await first.stop();

        const second = await serve();
        try {
          expect(await send(second, victim.apiKey, banned)).toBe('BANNED');
        } finally {
          await second.stop();
        }
      } finally {
        await database.drop();
      }
    }, 180_000);
  });
}
