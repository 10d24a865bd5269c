/**
 * DESIGN.md §4: "a rejected or failed request consumes nothing". The quota step runs before
 * validation, blacklist and frequency, and frequency before persist: when a later step rejects, or
 * the insert fails, the undos must give back the tenant's quota and the recipient's frequency slot.
 * Everything is real (SQLite file, in-process limiter, the runtime's chain); the insert failure is a
 * real SQLite failure (a trigger that aborts inserts), except in the last test, where a writer whose
 * insert rejects stands in for a storage failure on the chain alone.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockingIdempotencyGuard } from '../../src/admission/adapters/idempotency-guard.js';
import type { AdmissionContext } from '../../src/admission/context.js';
import { defaultChain } from '../../src/admission/default-chain.js';
import { frequencySubject } from '../../src/admission/interceptors/frequency.js';
import type { MessageWriter } from '../../src/admission/ports.js';
import { SluiceError } from '../../src/core/errors.js';
import type { Rule } from '../../src/limiter/index.js';
import { requestHashOf } from '../../src/services/message-service.js';
import { expectError, phone, sms, startApp, type TestApp } from '../http/support.js';

const DAY_MS = 86_400_000;
const QUOTA = 3;
const RULES = { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] };
const LIMITER_RULES: Rule[] = [{ windowMs: 60_000, limit: 1, banMs: 0, algorithm: 'sliding-log' }];

let t: TestApp;
let numbers = 0;
const freshPhone = () => phone(50_000 + ++numbers);

beforeAll(async () => {
  t = await startApp();
  // Noon UTC of a coming day: the daily quota's window cannot end in the middle of a test.
  t.clock.set(Math.ceil(t.clock.now() / DAY_MS) * DAY_MS + DAY_MS / 2);
});
afterAll(async () => {
  await t?.close();
});

/** A tenant with a QPS limit and a daily sms quota of QUOTA, and a 1-per-minute sms rule. */
async function quotaTenant(): Promise<{ id: string; apiKey: string }> {
  const tenant = await t.createTenant();
  const patch = await t.admin('PATCH', `/v1/admin/tenants/${tenant.id}`, { qpsLimit: QUOTA, dailyQuotas: { sms: QUOTA } });
  expect(patch.statusCode, patch.body).toBe(200);
  expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, RULES)).statusCode).toBe(200);
  return tenant;
}

/** Proves the whole quota is still there: exactly QUOTA sends pass (same instant), the next is QUOTA_EXCEEDED. */
async function expectFullQuota(apiKey: string): Promise<void> {
  for (let i = 0; i < QUOTA; i++) {
    const response = await t.send(apiKey, sms(freshPhone()));
    expect(response.statusCode, `send ${i + 1} of ${QUOTA}: ${response.body}`).toBe(202);
  }
  // The QPS bucket (also QUOTA per second) refills in a second; the daily quota does not.
  t.clock.advance(1000);
  const over = expectError(await t.send(apiKey, sms(freshPhone())), 429, 'QUOTA_EXCEEDED');
  expect(over.quota).toBe('daily sms quota');
}

/** The day's sms count of the tenant's quota, as the quota step keeps it. */
async function dailyCount(tenantId: string): Promise<number> {
  const decision = await t.runtime.backend.limiter.peek({
    subject: `quota:${tenantId}:sms:day`,
    rules: [{ windowMs: DAY_MS, limit: QUOTA, algorithm: 'fixed-window' }],
    now: t.clock.now(),
  });
  return decision.counts[0]!;
}

const recipientCount = async (tenantId: string, to: string) =>
  (await t.runtime.backend.limiter.peek({ subject: frequencySubject(tenantId, 'sms', to), rules: LIMITER_RULES })).counts[0];

describe('a rejected request consumes nothing', () => {
  it('the quota is given back when the blacklist rejects after it', async () => {
    const tenant = await quotaTenant();
    const blocked = freshPhone();
    await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, { channel: 'sms', recipients: [blocked] });
    for (let i = 0; i < 2 * QUOTA; i++) expectError(await t.send(tenant.apiKey, sms(blocked)), 403, 'BLACKLISTED');
    expect(await dailyCount(tenant.id)).toBe(0);
    await expectFullQuota(tenant.apiKey);
  });

  it('the quota is given back when validation rejects after it', async () => {
    const tenant = await quotaTenant();
    for (let i = 0; i < 2 * QUOTA; i++) expectError(await t.send(tenant.apiKey, sms('0000')), 400, 'INVALID_REQUEST');
    const past = sms(freshPhone(), { sendAt: t.clock.now() - 3_600_000 });
    for (let i = 0; i < 2 * QUOTA; i++) expectError(await t.send(tenant.apiKey, past), 400, 'INVALID_REQUEST');
    expect(await dailyCount(tenant.id)).toBe(0);
    await expectFullQuota(tenant.apiKey);
  });

  it('the quota is given back when the frequency rule rejects after it (RATE_LIMITED and BANNED)', async () => {
    const tenant = await quotaTenant();
    const to = freshPhone();
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    for (let i = 0; i < 2 * QUOTA; i++) expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED');
    expect(await dailyCount(tenant.id)).toBe(1);

    // A ban rejects too, and gives the quota back as well.
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 600 }] });
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED');
    for (let i = 0; i < 2 * QUOTA; i++) expectError(await t.send(tenant.apiKey, sms(to)), 429, 'BANNED');
    expect(await dailyCount(tenant.id)).toBe(1);

    // One of the day's QUOTA is used by the accepted send; the rest is intact.
    for (let i = 1; i < QUOTA; i++) expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    t.clock.advance(1000);
    expect(expectError(await t.send(tenant.apiKey, sms(freshPhone())), 429, 'QUOTA_EXCEEDED').quota).toBe('daily sms quota');
  });
});

describe('a failed insert consumes nothing', () => {
  /** A real storage failure: SQLite aborts every insert into messages until the trigger is dropped. */
  const failInserts = () =>
    sql`CREATE TRIGGER fail_message_inserts BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'disk on fire'); END`.execute(
      t.runtime.database.db,
    );
  const healInserts = () => sql`DROP TRIGGER fail_message_inserts`.execute(t.runtime.database.db);

  it('answers 503 UNAVAILABLE and gives back the quota and the recipient frequency slot', async () => {
    const tenant = await quotaTenant();
    const to = freshPhone();
    await failInserts();
    try {
      for (let i = 0; i < 2 * QUOTA; i++) {
        const error = expectError(await t.send(tenant.apiKey, sms(to)), 503, 'UNAVAILABLE');
        expect(JSON.stringify(error)).not.toContain('disk on fire');
      }
      // With an Idempotency-Key too: the key was not taken by the failed attempt.
      expectError(await t.send(tenant.apiKey, sms(to), { 'idempotency-key': 'retry-me' }), 503, 'UNAVAILABLE');
    } finally {
      await healInserts();
    }
    expect(await recipientCount(tenant.id, to)).toBe(0);
    expect(await dailyCount(tenant.id)).toBe(0);

    // The recipient's one-per-minute slot is free: the retry is accepted, then the rule holds.
    const retried = await t.send(tenant.apiKey, sms(to), { 'idempotency-key': 'retry-me' });
    expect(retried.statusCode, retried.body).toBe(202);
    expect(await recipientCount(tenant.id, to)).toBe(1);
    expectError(await t.send(tenant.apiKey, sms(to)), 429, 'RATE_LIMITED');
    expect(await dailyCount(tenant.id)).toBe(1);
    const messages = await t.runtime.database.db.selectFrom('messages').select('id').where('tenant_id', '=', tenant.id).execute();
    expect(messages.map((row) => row.id)).toEqual([retried.json().id]);
  });

  it('a scheduled send whose insert fails gives back its slot at its due time', async () => {
    const tenant = await quotaTenant();
    const to = freshPhone();
    const sendAt = t.clock.now() + 600_000;
    await failInserts();
    try {
      for (let i = 0; i < 2; i++) expectError(await t.send(tenant.apiKey, sms(to, { sendAt })), 503, 'UNAVAILABLE');
    } finally {
      await healInserts();
    }
    const atDue = await t.runtime.backend.limiter.peek({
      subject: frequencySubject(tenant.id, 'sms', to),
      rules: LIMITER_RULES,
      now: sendAt,
    });
    expect(atDue.counts[0]).toBe(0);
    expect((await t.send(tenant.apiKey, sms(to, { sendAt }))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, sms(to, { sendAt })), 429, 'RATE_LIMITED');
  });

  it('on the chain alone: a writer whose insert rejects leaves quota and frequency unchanged', async () => {
    const tenant = await quotaTenant();
    const runtime = t.runtime;
    const failingWriter: MessageWriter = {
      findByIdempotencyKey: async () => undefined,
      insert: async () => {
        throw new Error('connection reset');
      },
    };
    const chain = defaultChain({
      directory: runtime.directory,
      blacklist: runtime.repositories.blacklist,
      messages: failingWriter,
      idempotency: new LockingIdempotencyGuard({ keySecret: Buffer.alloc(32), redisTimeoutMs: 100 }),
      quotaLimiter: runtime.backend.limiter,
      frequency: runtime.backend.frequency,
      validation: { defaultRegion: runtime.settings.defaultRegion, scheduleHorizonMs: 30 * DAY_MS },
    });
    const to = freshPhone();
    for (let i = 0; i < 2 * QUOTA; i++) {
      const request = sms(to);
      const context: AdmissionContext = {
        id: `undo-${i}`,
        now: t.clock.now(),
        apiKey: tenant.apiKey,
        idempotencyKey: undefined,
        requestHash: requestHashOf(request),
        request,
      };
      const failure = await chain.admit(context).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(SluiceError);
      expect((failure as SluiceError).code).toBe('UNAVAILABLE');
    }
    expect(await recipientCount(tenant.id, to)).toBe(0);
    expect(await dailyCount(tenant.id)).toBe(0);
    // The real chain then accepts the full quota, this recipient first.
    expect((await t.send(tenant.apiKey, sms(to))).statusCode).toBe(202);
    for (let i = 1; i < QUOTA; i++) expect((await t.send(tenant.apiKey, sms(freshPhone()))).statusCode).toBe(202);
    t.clock.advance(1000);
    expect(expectError(await t.send(tenant.apiKey, sms(freshPhone())), 429, 'QUOTA_EXCEEDED').quota).toBe('daily sms quota');
  });
});
