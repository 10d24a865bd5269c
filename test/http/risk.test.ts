/**
 * The risk-control contract through app.inject(): stored rule sets per action (admin PUT/GET),
 * POST /v1/risk/check and /v1/risk/events on the worked OTP example, shadow mode and its metric,
 * bad input (400 naming the field), 404 for an action without rules, tenants kept apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEventsDeduplicated } from './risk-dedupe.js';
import { expectError, startApp, type TestApp } from './support.js';

let t: TestApp;

/** docs/risk.md's worked example. */
const OTP_RULES = [
  { name: 'codes-per-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 3 },
  { name: 'codes-per-device', kind: 'window', key: ['device'], windowSeconds: 3600, limit: 10 },
  { name: 'phones-per-device', kind: 'distinct', key: ['device'], of: 'phone', windowSeconds: 3600, limit: 3 },
  { name: 'new-device', kind: 'seen', key: ['user'], of: 'device', effect: 'review' },
  { name: 'failed-verifications', kind: 'last-n', key: ['user'], n: 5, m: 3, outcome: 'failed' },
];

async function tenantWith(action: string, rules: unknown[]) {
  const tenant = await t.createTenant();
  const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/${action}`, { rules });
  expect(put.statusCode, put.body).toBe(200);
  return tenant;
}

const check = (apiKey: string, body: Record<string, unknown>) => t.call(apiKey, 'POST', '/v1/risk/check', { action: 'otp', ...body });
const event = (apiKey: string, body: Record<string, unknown>) => t.call(apiKey, 'POST', '/v1/risk/events', { action: 'otp', ...body });

describe('risk checks over HTTP (in process: one call per check)', () => {
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  describe('admin: risk rule sets per action', () => {
    it('PUT replaces and bumps the version; GET answers the same shape, which can be PUT back', async () => {
      const tenant = await tenantWith('otp', OTP_RULES);
      const got = await t.admin('GET', `/v1/admin/tenants/${tenant.id}/risk/otp`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual({ action: 'otp', rules: OTP_RULES, version: 1 });
      const again = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, got.json());
      expect(again.json()).toMatchObject({ version: 2 });
      expectError(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/risk/login`), 404, 'NOT_FOUND');
      expectError(await t.admin('PUT', '/v1/admin/tenants/nope/risk/otp', { rules: OTP_RULES }), 404, 'NOT_FOUND');
    });

    it('accepts a distinct limit above the exact range (a HyperLogLog) and judges with it', async () => {
      const { apiKey } = await tenantWith('signup', [
        { name: 'users-per-ip', kind: 'distinct', key: ['ip'], of: 'user', windowSeconds: 86_400, limit: 50_000 },
      ]);
      for (const user of ['a', 'b', 'a']) {
        const response = await t.call(apiKey, 'POST', '/v1/risk/check', { action: 'signup', dimensions: { ip: '10.0.0.1', user } });
        expect(response.json(), response.body).toEqual({ allowed: true, decision: 'allow', reasons: [] });
      }
    });

    it('refuses bad rule sets with 400 naming the field, storing nothing', async () => {
      const tenant = await t.createTenant();
      const put = (rules: unknown) => t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, { rules });
      const field = async (rules: unknown) => {
        const response = await put(rules);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json().error.code).toBe('INVALID_REQUEST');
        return JSON.stringify(response.json().error);
      };
      expect(await field([{ ...OTP_RULES[0], kind: 'hll' }])).toMatch(/kind/);
      expect(await field([{ name: 'x', kind: 'last-n', key: ['user'], n: 5, outcome: 'failed' }])).toMatch(/rules\[0\]\.m/);
      expect(await field([{ name: 'x', kind: 'distinct', key: ['device'], windowSeconds: 60, limit: 3 }])).toMatch(/rules\[0\]\.of/);
      expect(await field([{ name: 'x', kind: 'window', key: ['phone'], limit: 3 }])).toMatch(/rules\[0\]\.windowSeconds/);
      expect(await field([{ ...OTP_RULES[0], windowSeconds: 31 * 86_400 + 1 }])).toMatch(/windowSeconds/);
      expect(await field([{ ...OTP_RULES[0], n: 5 }])).toMatch(/rules\[0\]\.n/);
      expect(await field([{ name: 'x', kind: 'last-n', key: ['user'], n: 3, m: 4, outcome: 'failed' }])).toMatch(/rules\[0\]\.m/);
      expect(await field([OTP_RULES[0], OTP_RULES[0]])).toMatch(/rules\[1\]\.name/);
      expect(await field(Array.from({ length: 33 }, (_, i) => ({ ...OTP_RULES[0], name: `r${i}` })))).toMatch(/rules/);
      expect(await field([])).toMatch(/rules/);
      expect(await field([{ name: 'x', kind: 'distinct', key: ['ip'], of: 'user', windowSeconds: 60, limit: 1_000_000_001 }])).toMatch(
        /rules\W0\W+limit/,
      );
      expectError(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/risk/otp`), 404, 'NOT_FOUND');
    });

    it('refuses a set whose state for one event may exceed SLUICE_RISK_STATE_MAX_BYTES, stating the bytes and the cap', async () => {
      const tenant = await t.createTenant();
      const put = (rules: unknown[]) => t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, { rules });
      const refused = async (rules: unknown[]) => {
        const response = await put(rules);
        expectError(response, 400, 'INVALID_REQUEST');
        return response.json().error as { field: string; message: string };
      };
      // The attack's rule: a Bloom filter for 1,000,000 values at 1e-9, 10.5 MB for each new user.
      expect(
        await refused([{ name: 'new-device', kind: 'seen', key: ['user'], of: 'device', capacity: 1_000_000, falsePositiveRate: 1e-9 }]),
      ).toEqual({
        code: 'INVALID_REQUEST',
        field: 'rules[0]',
        message:
          'rules[0]: keeps up to 11,675,040 bytes per subject (1 Bloom filter of 10,503,680 B for 1,000,000 values at a false-positive rate of 1e-9), above SLUICE_RISK_STATE_MAX_BYTES of 2,097,152 bytes per event',
      });
      // A window of a million a day keeps a log entry per admission.
      expect((await refused([{ name: 'w', kind: 'window', key: ['phone'], windowSeconds: 86_400, limit: 1_000_000 }])).field).toBe(
        'rules[0]',
      );
      // Rules that fit alone but not together: two exact distinct rules of 10,000 values.
      const distinct = (name: string) => ({ name, kind: 'distinct', key: ['device'], of: 'phone', windowSeconds: 3600, limit: 10_000 });
      expect(await refused([distinct('a'), distinct('b')])).toMatchObject({
        field: 'rules',
        message:
          'rules: keep up to 2,880,320 bytes for one event\'s values ("a" 1,440,160, "b" 1,440,160), above SLUICE_RISK_STATE_MAX_BYTES of 2,097,152 bytes per event',
      });
      expectError(await t.admin('GET', `/v1/admin/tenants/${tenant.id}/risk/otp`), 404, 'NOT_FOUND');
      // What fits is stored: the worked example with one of them, a HyperLogLog, a filter of 100,000 values.
      const fits = await put([
        ...OTP_RULES,
        distinct('a'),
        { name: 'hll', kind: 'distinct', key: ['ip'], of: 'user', windowSeconds: 86_400, limit: 50_000 },
        { name: 'big-seen', kind: 'seen', key: ['user'], of: 'ip', capacity: 100_000 },
      ]);
      expect(fits.statusCode, fits.body).toBe(200);
    });
  });

  describe('POST /v1/risk/check and /v1/risk/events: the OTP example', () => {
    it('a new device is sent to review, then allowed; a fourth code to one phone in 5 minutes is denied', async () => {
      const { apiKey } = await tenantWith('otp', OTP_RULES);
      const dims = { phone: '+8613800000001', device: 'dev-1', user: 'u1' };
      const first = await check(apiKey, { dimensions: dims });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toEqual({
        allowed: true,
        decision: 'review',
        reasons: [{ rule: 'new-device', kind: 'seen', code: 'NOT_SEEN', effect: 'review', shadow: false }],
      });
      expect((await check(apiKey, { dimensions: dims })).json()).toEqual({ allowed: true, decision: 'allow', reasons: [] });
      expect((await check(apiKey, { dimensions: dims })).json().decision).toBe('allow');
      const fourth = (await check(apiKey, { dimensions: dims })).json();
      expect(fourth).toMatchObject({ allowed: false, decision: 'deny' });
      expect(fourth.reasons).toEqual([
        {
          rule: 'codes-per-phone',
          kind: 'window',
          code: 'RATE_LIMITED',
          effect: 'deny',
          count: 3,
          limit: 3,
          retryAfterMs: 300_000,
          shadow: false,
        },
      ]);
      t.clock.advance(300_000);
      expect((await check(apiKey, { dimensions: dims })).json().decision).toBe('allow');
    });

    it('at most 3 phones per device an hour: the fourth phone is denied, the known ones still pass', async () => {
      const { apiKey } = await tenantWith('otp', OTP_RULES);
      const dims = (phone: number) => ({ phone: `+86139000000${phone}`, device: 'dev-2', user: 'u2' });
      for (const phone of [1, 2, 3]) expect((await check(apiKey, { dimensions: dims(phone) })).json().allowed).toBe(true);
      const denied = (await check(apiKey, { dimensions: dims(4) })).json();
      expect(denied).toMatchObject({ allowed: false, decision: 'deny' });
      expect(denied.reasons).toEqual([
        {
          rule: 'phones-per-device',
          kind: 'distinct',
          code: 'DISTINCT_LIMIT',
          effect: 'deny',
          count: 3,
          limit: 3,
          retryAfterMs: 3_600_000,
          shadow: false,
        },
      ]);
      expect((await check(apiKey, { dimensions: dims(2) })).json().allowed).toBe(true);
    });

    it('3 failed verifications of the last 5 deny; successes push them out', async () => {
      const { apiKey } = await tenantWith('otp', OTP_RULES);
      const dims = { phone: '+8613700000001', device: 'dev-3', user: 'u3' };
      for (const outcome of ['failed', 'failed']) {
        const response = await event(apiKey, { dimensions: dims, outcome });
        expect(response.statusCode, response.body).toBe(202);
      }
      expect((await check(apiKey, { dimensions: dims })).json().allowed).toBe(true);
      await event(apiKey, { dimensions: dims, outcome: 'failed' });
      const denied = (await check(apiKey, { dimensions: dims })).json();
      expect(denied.reasons).toEqual([
        { rule: 'failed-verifications', kind: 'last-n', code: 'LAST_N_MATCHED', effect: 'deny', count: 3, limit: 3, shadow: false },
      ]);
      for (let i = 0; i < 3; i++) await event(apiKey, { dimensions: dims, outcome: 'verified' });
      expect((await check(apiKey, { dimensions: dims })).json().allowed).toBe(true);
    });

    it('an event needs only the dimensions of the rules it records in: window rules count checks, not events', async () => {
      const { apiKey } = await tenantWith('otp', [OTP_RULES[0], OTP_RULES[4]]);
      for (let i = 0; i < 3; i++) {
        const recorded = await event(apiKey, { dimensions: { user: 'u-only' }, outcome: 'failed' });
        expect(recorded.statusCode, recorded.body).toBe(202);
      }
      const denied = (await check(apiKey, { dimensions: { phone: '+8613500000001', user: 'u-only' } })).json();
      expect(denied.reasons).toEqual([expect.objectContaining({ rule: 'failed-verifications', code: 'LAST_N_MATCHED', count: 3 })]);
      // The full set: the event feeds the user's last-n rule and names the rules it cannot feed.
      const full = await tenantWith('otp', OTP_RULES);
      for (let i = 0; i < 3; i++) {
        const partial = await event(full.apiKey, { dimensions: { user: 'u-only' }, outcome: 'failed' });
        expect(partial.statusCode, partial.body).toBe(202);
        expect(partial.json()).toEqual({ recorded: true, skipped: ['phones-per-device', 'new-device'] });
      }
      const fullDenied = (await check(full.apiKey, { dimensions: { phone: '+8613500000001', device: 'd-only', user: 'u-only' } })).json();
      expect(fullDenied.reasons).toEqual(
        expect.arrayContaining([expect.objectContaining({ rule: 'failed-verifications', code: 'LAST_N_MATCHED', count: 3 })]),
      );
      // The device's rule alone (no user): the last-n and seen rules are skipped.
      expect((await event(full.apiKey, { dimensions: { device: 'd-only', phone: 'p' }, outcome: 'ok' })).json()).toEqual({
        recorded: true,
        skipped: ['new-device', 'failed-verifications'],
      });
    });

    it('an event that feeds no rule is 400 naming what each rule needs, so a misspelt dimension is not silent', async () => {
      const full = await tenantWith('otp', OTP_RULES);
      const typo = await event(full.apiKey, { dimensions: { usr: 'u1' }, outcome: 'failed' });
      expect(expectError(typo, 400, 'INVALID_REQUEST')).toMatchObject({
        field: 'dimensions',
        message:
          'dimensions: feeds no rule of the set: "phones-per-device" needs device, phone; "new-device" needs user, device; "failed-verifications" needs user',
      });
      const windows = await tenantWith('otp', [OTP_RULES[0]]);
      const none = await event(windows.apiKey, { dimensions: { phone: 'p' }, outcome: 'failed' });
      expect(expectError(none, 400, 'INVALID_REQUEST').field).toBe('dimensions');
    });

    it('a repeated requestId of an event records nothing and still answers 202', async () => {
      await expectEventsDeduplicated(t);
    });

    it('a denied check records nothing in window rules (its admissions are taken back)', async () => {
      const { apiKey } = await tenantWith('otp', [
        { name: 'per-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 2 },
        { name: 'one-phone-per-device', kind: 'distinct', key: ['device'], of: 'phone', windowSeconds: 3600, limit: 1 },
      ]);
      expect((await check(apiKey, { dimensions: { phone: 'p1', device: 'd1' } })).json().allowed).toBe(true);
      expect((await check(apiKey, { dimensions: { phone: 'p2', device: 'd1' } })).json().allowed).toBe(false);
      // p2's window holds nothing from the denied check: two more pass on another device.
      expect((await check(apiKey, { dimensions: { phone: 'p2', device: 'd2' } })).json().allowed).toBe(true);
      expect((await check(apiKey, { dimensions: { phone: 'p2', device: 'd3' } })).json().allowed).toBe(true);
      expect((await check(apiKey, { dimensions: { phone: 'p2', device: 'd4' } })).json().reasons).toEqual([
        expect.objectContaining({ rule: 'per-phone', count: 2 }),
      ]);
    });

    it('record: false looks without recording', async () => {
      const { apiKey } = await tenantWith('otp', OTP_RULES);
      const dims = { phone: '+8613600000001', device: 'dev-4', user: 'u4' };
      for (let i = 0; i < 5; i++) expect((await check(apiKey, { dimensions: dims, record: false })).json().decision).toBe('review');
      expect((await check(apiKey, { dimensions: dims })).json().decision).toBe('review');
      expect((await check(apiKey, { dimensions: dims })).json().decision).toBe('allow');
    });

    it('shadow rules fire, are reported with shadow: true and counted in the metric, and never decide', async () => {
      const { apiKey } = await tenantWith('otp', [
        { name: 'strict-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 1, mode: 'shadow' },
        { name: 'loose-phone', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 5 },
      ]);
      const dims = { phone: 'p-shadow' };
      expect((await check(apiKey, { dimensions: dims })).json()).toEqual({ allowed: true, decision: 'allow', reasons: [] });
      const second = (await check(apiKey, { dimensions: dims })).json();
      expect(second).toEqual({
        allowed: true,
        decision: 'allow',
        reasons: [
          {
            rule: 'strict-phone',
            kind: 'window',
            code: 'RATE_LIMITED',
            effect: 'deny',
            count: 1,
            limit: 1,
            retryAfterMs: 300_000,
            shadow: true,
          },
        ],
      });
      const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
      expect(metrics.body).toMatch(/sluice_risk_decisions_total\{action="otp",rule="strict-phone",outcome="deny",shadow="true"\} 1/);
      expect(metrics.body).toMatch(/sluice_risk_decisions_total\{action="otp",rule="loose-phone",outcome="allow",shadow="false"\} 2/);
      expect(metrics.body).not.toMatch(/p-shadow/);
    });

    it('a changed rule set applies to the next check', async () => {
      const tenant = await tenantWith('otp', [{ name: 'w', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 1 }]);
      const dims = { phone: 'p-live' };
      expect((await check(tenant.apiKey, { dimensions: dims })).json().allowed).toBe(true);
      expect((await check(tenant.apiKey, { dimensions: dims })).json().allowed).toBe(false);
      await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/risk/otp`, {
        rules: [{ name: 'w', kind: 'window', key: ['phone'], windowSeconds: 300, limit: 3 }],
      });
      expect((await check(tenant.apiKey, { dimensions: dims })).json().allowed).toBe(true);
    });

    it("404 for an action without rules (and for another tenant's action); 400 naming a missing or bad dimension", async () => {
      const { apiKey } = await tenantWith('otp', OTP_RULES);
      const other = await t.createTenant();
      const dims = { phone: 'p', device: 'd', user: 'u' };
      expectError(await check(apiKey, { action: 'login', dimensions: dims }), 404, 'NOT_FOUND');
      expectError(await check(other.apiKey, { dimensions: dims }), 404, 'NOT_FOUND');
      expectError(await event(other.apiKey, { dimensions: dims, outcome: 'failed' }), 404, 'NOT_FOUND');
      const missing = await check(apiKey, { dimensions: { phone: 'p', device: 'd' } });
      expectError(missing, 400, 'INVALID_REQUEST');
      expect(missing.json().error.field).toBe('dimensions.user');
      const long = await check(apiKey, { dimensions: { ...dims, user: 'u'.repeat(257) } });
      expectError(long, 400, 'INVALID_REQUEST');
      expect(long.body).toMatch(/user/);
      const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`d${i}`, 'x']));
      const tooMany = await check(apiKey, { dimensions: { ...dims, ...many } });
      expectError(tooMany, 400, 'INVALID_REQUEST');
      expect(tooMany.body).toMatch(/dimensions/);
      expectError(
        await t.app.inject({ method: 'POST', url: '/v1/risk/check', payload: { action: 'otp', dimensions: dims } }),
        401,
        'UNAUTHORIZED',
      );
    });
  });
});
