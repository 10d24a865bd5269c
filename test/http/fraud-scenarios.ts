/**
 * SMS pumping protection through the HTTP API, as scenarios run on each backend (fraud.test.ts in
 * process, fraud-redis.int.test.ts on Redis): the simulated attack with ordinary traffic beside it,
 * the same attack in monitor mode, the spend cap under concurrency with a cancel, feedback's
 * isolation, the country list and the safe list.
 */
import { expect } from 'vitest';
import { expectError, handOver, sms, type TestApp } from './support.js';

const pad3 = (n: number) => String(n).padStart(3, '0');
/** Sequential numbers in one UK mobile range: what a pumping bot asks codes for. */
export const attackNumber = (n: number) => `+447400123${pad3(n)}`;
/** Ordinary CN mobiles, each in its own 8-digit prefix (`86139` + 3 digits). */
export const ordinaryNumber = (n: number) => `+86139${pad3(n)}00000`;

export const PRICES = { currency: 'USD', default: 0.05, countries: { GB: 0.04 } };

export async function setPrices(t: TestApp): Promise<void> {
  const response = await t.admin('PUT', '/v1/admin/prices/sms', PRICES);
  expect(response.statusCode, response.body).toBe(200);
}

export async function setPolicy(t: TestApp, tenantId: string, policy: Record<string, unknown>): Promise<void> {
  const response = await t.admin('PUT', `/v1/admin/tenants/${tenantId}/fraud/sms`, policy);
  expect(response.statusCode, response.body).toBe(200);
}

/**
 * A refusal names the rule kind and carries Retry-After (429s), never the policy's thresholds or
 * counts, the prefix or the country (issue 33): exactly these fields, and no digit in the text.
 */
export function expectOpaqueRefusal(error: Record<string, unknown>, rule: string): void {
  expect(Object.keys(error).sort()).toEqual(
    error.code === 'DESTINATION_BLOCKED' ? ['code', 'message', 'rule'] : ['code', 'message', 'retryAfterSeconds', 'rule'],
  );
  expect(error.rule).toBe(rule);
  expect(error.message).not.toMatch(/\d/);
}

const confirm = (t: TestApp, apiKey: string, id: string) => t.call(apiKey, 'POST', `/v1/messages/${id}/feedback`, { outcome: 'confirmed' });

/** The attack's policy: the example, its spend cap aside. */
export const ATTACK_POLICY = {
  countries: { allow: ['CN', 'GB', 'US'] },
  prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }],
  conversion: { windowSeconds: 3600, minSends: 20, minRate: 0.3, by: 'country' },
};

/**
 * 200 sends to sequential numbers of one range, none confirmed, each followed by an ordinary send
 * to another number that its tenant confirms. Resolves the attack's accepted sends and refusals.
 */
export async function runAttack(t: TestApp, apiKey: string, advanceMs = 0) {
  let accepted = 0;
  const refusals: Record<string, unknown>[] = [];
  const acceptedIds: string[] = [];
  for (let i = 0; i < 200; i++) {
    const attack = await t.send(apiKey, sms(attackNumber(i)));
    if (attack.statusCode === 202) {
      accepted++;
      acceptedIds.push(attack.json().id);
    } else refusals.push(expectError(attack, 429, 'FRAUD_SUSPECTED'));
    const ordinary = await t.send(apiKey, sms(ordinaryNumber(i)));
    expect(ordinary.statusCode, ordinary.body).toBe(202);
    await handOver(t, ordinary.json().id);
    expect((await confirm(t, apiKey, ordinary.json().id)).statusCode).toBe(200);
    t.clock.advance(advanceMs);
  }
  return { accepted, refusals, acceptedIds };
}

/** Enforce: the range is refused after at most the limit (the conversion rule's 20, under the prefix's 30); ordinary traffic passes throughout. */
export async function attackIsRefused(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, { mode: 'enforce', ...ATTACK_POLICY });
  const { accepted, refusals } = await runAttack(t, tenant.apiKey);
  expect(accepted).toBe(20);
  expect(refusals).toHaveLength(180);
  for (const refusal of refusals) expectOpaqueRefusal(refusal, 'conversion');
  const retryAfter = refusals[0]!.retryAfterSeconds as number;
  expect(retryAfter).toBeGreaterThan(3500);
  expect(retryAfter).toBeLessThanOrEqual(3600);
}

/** Velocity alone: exactly the prefix's limit of the range passes. */
export async function prefixVelocityHolds(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, { mode: 'enforce', prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }] });
  const { accepted, refusals } = await runAttack(t, tenant.apiKey);
  expect(accepted).toBe(30);
  for (const refusal of refusals) expectOpaqueRefusal(refusal, 'prefix');
}

async function metricValue(t: TestApp, labels: string): Promise<number> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`sluice_fraud_decisions_total{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Monitor: the same attack is accepted in full, and what enforce would have refused is counted and written on the messages. */
export async function monitorRecordsTheAttack(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, { mode: 'monitor', ...ATTACK_POLICY });
  const labels = (rule: string, outcome: string) => `rule="${rule}",outcome="${outcome}",mode="monitor"`;
  const before = {
    prefix: await metricValue(t, labels('prefix', 'would_refuse')),
    conversion: await metricValue(t, labels('conversion', 'would_refuse')),
  };
  const { accepted, acceptedIds } = await runAttack(t, tenant.apiKey);
  expect(accepted).toBe(200);
  expect((await metricValue(t, labels('prefix', 'would_refuse'))) - before.prefix).toBe(170);
  expect((await metricValue(t, labels('conversion', 'would_refuse'))) - before.conversion).toBe(180);
  const status = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms/status`)).json();
  expect(status.mode).toBe('monitor');
  expect(status.today).toEqual(
    expect.arrayContaining([
      { rule: 'prefix', outcome: 'would_refuse', count: 170 },
      { rule: 'conversion', outcome: 'would_refuse', count: 180 },
      { rule: 'prefix', outcome: 'refuse', count: 0 },
    ]),
  );
  // The timeline: the first sends passed every rule, the last one would have been refused by both.
  const first = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/messages/${acceptedIds[0]}`)).json();
  expect(first.fraud).toBeUndefined();
  const last = (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/messages/${acceptedIds.at(-1)}`)).json();
  expect(last.fraud.flags.map((flag: { rule: string; code: string }) => [flag.rule, flag.code])).toEqual([
    ['prefix', 'FRAUD_SUSPECTED'],
    ['conversion', 'FRAUD_SUSPECTED'],
  ]);
  // The timeline keeps the full detail that the tenant's error leaves out.
  expect(last.fraud.flags.map((flag: { message: string }) => flag.message)).toEqual([
    'at most 30 SMS per 3600 s to one 8-digit number prefix (+44740012)',
    'SMS to GB: 0 of 20 confirmed in 3600 s, below the rate of 0.3',
  ]);
}

/**
 * The cap holds exactly under concurrent sends; a cancel gives its cost back once; a send that a
 * later step (frequency) refuses takes nothing.
 */
export async function spendCapHolds(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  // 0.05 a CN message: 20 fit in 1.00.
  await setPolicy(t, tenant.id, { mode: 'enforce', monthlySpend: { limit: 1, currency: 'USD' } });
  const scheduled = await t.send(tenant.apiKey, sms(ordinaryNumber(999), { sendAt: t.clock.now() + 3_600_000 }));
  expect(scheduled.statusCode, scheduled.body).toBe(202);
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => t.send(tenant.apiKey, sms(ordinaryNumber(i)))));
  expect(answers.filter((answer) => answer.statusCode === 202)).toHaveLength(19);
  const refused = answers.filter((answer) => answer.statusCode !== 202);
  expect(refused).toHaveLength(31);
  for (const answer of refused) expect(expectError(answer, 429, 'SPEND_LIMIT_REACHED')).toMatchObject({ rule: 'spend', limit: 1 });
  const status = async () => (await t.admin('GET', `/v1/admin/tenants/${tenant.id}/fraud/sms/status`)).json();
  expect((await status()).spend).toEqual({ spent: 1, limit: 1, currency: 'USD' });

  // A cancel gives the scheduled message's 0.05 back: one more send fits, and a repeated cancel gives nothing more.
  const id = scheduled.json().id as string;
  expect((await t.call(tenant.apiKey, 'DELETE', `/v1/messages/${id}`)).statusCode).toBe(200);
  expect((await status()).spend.spent).toBeCloseTo(0.95, 9);
  expect((await t.call(tenant.apiKey, 'DELETE', `/v1/messages/${id}`)).statusCode).toBe(200);
  expect((await status()).spend.spent).toBeCloseTo(0.95, 9);
  expect((await t.send(tenant.apiKey, sms(ordinaryNumber(100)))).statusCode).toBe(202);
  expectError(await t.send(tenant.apiKey, sms(ordinaryNumber(101))), 429, 'SPEND_LIMIT_REACHED');
  expect((await status()).spend.spent).toBe(1);

  // A later step's refusal gives the cost back: 1 a minute per recipient, a cap of two messages.
  const other = await t.createTenant();
  await setPolicy(t, other.id, { mode: 'enforce', monthlySpend: { limit: 0.1, currency: 'USD' } });
  await t.admin('PUT', `/v1/admin/tenants/${other.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] });
  expect((await t.send(other.apiKey, sms(ordinaryNumber(1)))).statusCode).toBe(202);
  expectError(await t.send(other.apiKey, sms(ordinaryNumber(1))), 429, 'RATE_LIMITED');
  expect((await t.send(other.apiKey, sms(ordinaryNumber(2)))).statusCode).toBe(202);
  expectError(await t.send(other.apiKey, sms(ordinaryNumber(3))), 429, 'SPEND_LIMIT_REACHED');
}

/** A later step's refusal gives the prefix's velocity back: a range of 2 an hour, 1 a minute per recipient. */
export async function laterRefusalGivesVelocityBack(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, { mode: 'enforce', prefixes: [{ digits: 8, windowSeconds: 3600, limit: 2 }] });
  await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] });
  expect((await t.send(tenant.apiKey, sms(attackNumber(1)))).statusCode).toBe(202);
  for (let i = 0; i < 3; i++) expectError(await t.send(tenant.apiKey, sms(attackNumber(1))), 429, 'RATE_LIMITED');
  expect((await t.send(tenant.apiKey, sms(attackNumber(2)))).statusCode).toBe(202);
  expect(expectError(await t.send(tenant.apiKey, sms(attackNumber(3))), 429, 'FRAUD_SUSPECTED')).toMatchObject({ rule: 'prefix' });
}

/** The batch API judges each message: in one batch to a range of 3 an hour, the first 3 pass and the rest are refused item by item. */
export async function batchIsJudgedPerMessage(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, {
    mode: 'enforce',
    countries: { block: ['US'] },
    prefixes: [{ digits: 8, windowSeconds: 3600, limit: 3 }],
  });
  const messages = [...Array.from({ length: 6 }, (_, i) => sms(attackNumber(i))), sms('+12025550123'), sms(ordinaryNumber(1))];
  const batch = await t.call(tenant.apiKey, 'POST', '/v1/messages/batch', { messages });
  expect(batch.statusCode, batch.body).toBe(200);
  const results = batch.json().results as { index: number; id?: string; error?: { code: string } }[];
  expect(results.map((result) => result.error?.code ?? 'accepted')).toEqual([
    'accepted',
    'accepted',
    'accepted',
    'FRAUD_SUSPECTED',
    'FRAUD_SUSPECTED',
    'FRAUD_SUSPECTED',
    'DESTINATION_BLOCKED',
    'accepted',
  ]);
}

/**
 * Feedback: only for a message handed to a provider (409 with its status otherwise), the message's
 * own tenant only (404 for another), once (a repeat answers the first time), batch messages too.
 */
export async function feedbackIsIsolated(t: TestApp): Promise<void> {
  const owner = await t.createTenant();
  const stranger = await t.createTenant();
  const id = (await t.send(owner.apiKey, sms(ordinaryNumber(1)))).json().id as string;
  expect(expectError(await confirm(t, owner.apiKey, id), 409, 'CONFLICT')).toMatchObject({ status: 'queued' });
  expectError(await confirm(t, stranger.apiKey, id), 404, 'NOT_FOUND');
  await handOver(t, id);
  expectError(await confirm(t, stranger.apiKey, id), 404, 'NOT_FOUND');
  expect((await t.call(owner.apiKey, 'GET', `/v1/messages/${id}`)).json().confirmedAt).toBeUndefined();
  const first = await confirm(t, owner.apiKey, id);
  expect(first.statusCode).toBe(200);
  expect(first.json()).toEqual({ id, outcome: 'confirmed', confirmedAt: new Date(t.clock.now()).toISOString() });
  t.clock.advance(5000);
  expect((await confirm(t, owner.apiKey, id)).json()).toEqual(first.json());
  expectError(await confirm(t, stranger.apiKey, id), 404, 'NOT_FOUND');
  expect((await t.call(owner.apiKey, 'GET', `/v1/messages/${id}`)).json().confirmedAt).toBe(first.json().confirmedAt);
  const batch = await t.call(owner.apiKey, 'POST', '/v1/messages/batch', { messages: [sms(ordinaryNumber(2)), sms(ordinaryNumber(3))] });
  for (const result of batch.json().results as { id: string }[]) {
    await handOver(t, result.id);
    expect((await confirm(t, owner.apiKey, result.id)).statusCode).toBe(200);
  }
}

/**
 * The attack on the conversion rule (issue 33): ten rounds of four SMS scheduled for tomorrow,
 * each confirmed and then canceled, must leave no conversion behind. The confirmations are 409
 * (never handed to a provider), the cancels give the sends back, and of 100 real unconfirmed
 * sends exactly `minSends` pass.
 */
export async function canceledConfirmationsDoNotCount(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, { mode: 'enforce', conversion: { windowSeconds: 3600, minSends: 5, minRate: 0.5, by: 'country' } });
  const tomorrow = t.clock.now() + 86_400_000;
  for (let round = 0; round < 10; round++) {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const scheduled = await t.send(tenant.apiKey, sms(attackNumber(round * 4 + i), { sendAt: tomorrow }));
      expect(scheduled.statusCode, scheduled.body).toBe(202);
      ids.push(scheduled.json().id);
    }
    for (const id of ids) expect(expectError(await confirm(t, tenant.apiKey, id), 409, 'CONFLICT')).toMatchObject({ status: 'scheduled' });
    for (const id of ids) expect((await t.call(tenant.apiKey, 'DELETE', `/v1/messages/${id}`)).statusCode).toBe(200);
    // A canceled message is not confirmed afterwards either.
    expect(expectError(await confirm(t, tenant.apiKey, ids[0]!), 409, 'CONFLICT')).toMatchObject({ status: 'canceled' });
  }
  let accepted = 0;
  for (let i = 0; i < 100; i++) {
    const answer = await t.send(tenant.apiKey, sms(attackNumber(100 + i)));
    if (answer.statusCode === 202) accepted++;
    else expect(expectError(answer, 429, 'FRAUD_SUSPECTED')).toMatchObject({ rule: 'conversion' });
  }
  expect(accepted).toBe(5);
}

/** Countries: an allow list and a block list; the safe list skips velocity, never the country list. */
export async function countriesAndSafeList(t: TestApp): Promise<void> {
  const tenant = await t.createTenant();
  await setPolicy(t, tenant.id, {
    mode: 'enforce',
    countries: { allow: ['CN'] },
    prefixes: [{ digits: 5, windowSeconds: 3600, limit: 1 }],
    safe: ['+447400123', '+86139'],
  });
  expectOpaqueRefusal(expectError(await t.send(tenant.apiKey, sms(attackNumber(1))), 403, 'DESTINATION_BLOCKED'), 'country');
  // +86139… is safe: no velocity; +86137… is not: one per hour in its 5-digit prefix.
  for (let i = 0; i < 5; i++) expect((await t.send(tenant.apiKey, sms(ordinaryNumber(i)))).statusCode).toBe(202);
  expect((await t.send(tenant.apiKey, sms('+8613700000001'))).statusCode).toBe(202);
  expectOpaqueRefusal(expectError(await t.send(tenant.apiKey, sms('+8613700000002')), 429, 'FRAUD_SUSPECTED'), 'prefix');
  // Other channels are not judged.
  expect((await t.send(tenant.apiKey, { channel: 'email', to: 'a@example.com', subject: 's', body: 'b' })).statusCode).toBe(202);

  await setPolicy(t, tenant.id, { mode: 'enforce', countries: { block: ['GB'] } });
  expectError(await t.send(tenant.apiKey, sms(attackNumber(2))), 403, 'DESTINATION_BLOCKED');
  expect((await t.send(tenant.apiKey, sms('+12025550123'))).statusCode).toBe(202);
}
