/**
 * The admin lookups the console reads: a tenant's recent messages and those to one recipient (newest first, keyset pages), one
 * message's timeline, a recipient's ban and counts (a peek), the rules dry run. Each reads only,
 * and the tenant of the path scopes it: another tenant's messages, bans and counts never show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, phone, sms, startApp, type TestApp } from './support.js';

let t: TestApp;

beforeAll(async () => {
  t = await startApp({ SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true' });
});
afterAll(async () => {
  await t?.close();
});

const search = (tenant: string, query: string) => t.admin('GET', `/v1/admin/tenants/${tenant}/messages?${query}`);

describe('GET /v1/admin/tenants/:id/messages', () => {
  it("finds the tenant's messages to a recipient in any spelling, newest first, and never another tenant's", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const to = phone(101);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sent = await t.send(a.apiKey, sms(to));
      expect(sent.statusCode, sent.body).toBe(202);
      ids.push(sent.json().id);
      t.clock.advance(1);
    }
    await t.send(a.apiKey, sms(phone(102)));
    const theirs = (await t.send(b.apiKey, sms(to))).json().id as string;

    // National spelling, as a send may write it (the default region is CN).
    const found = await search(a.id, `to=${encodeURIComponent(to.slice(3))}&channel=sms`);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json().messages.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
    expect(found.json().nextCursor).toBeUndefined();
    expect(found.json().messages[0]).toMatchObject({ channel: 'sms', to, status: 'queued' });
    expect(found.json().messages[0].deliveryAttempts).toBeUndefined();
    // Without a channel: every channel that reads the text.
    expect((await search(a.id, `to=${encodeURIComponent(to)}`)).json().messages).toHaveLength(3);
    expect((await search(b.id, `to=${encodeURIComponent(to)}`)).json().messages.map((m: { id: string }) => m.id)).toEqual([theirs]);
    expect((await search(a.id, `to=${encodeURIComponent(to)}&channel=email`)).statusCode).toBe(400);
  });

  it('pages with an opaque cursor, filters by status, and refuses bad limits, cursors and tenants', async () => {
    const a = await t.createTenant();
    const to = phone(111);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await t.send(a.apiKey, sms(to))).json().id);
      t.clock.advance(1);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page++) {
      const response = await search(a.id, `to=${encodeURIComponent(to)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(response.statusCode, response.body).toBe(200);
      seen.push(...response.json().messages.map((m: { id: string }) => m.id));
      cursor = response.json().nextCursor;
      if (page < 2) expect(cursor).toEqual(expect.any(String));
    }
    expect(cursor).toBeUndefined();
    expect(seen).toEqual([...ids].reverse());

    const canceled = await t.call(a.apiKey, 'DELETE', `/v1/messages/${ids[1]}`);
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect((await search(a.id, `to=${encodeURIComponent(to)}&status=canceled`)).json().messages.map((m: { id: string }) => m.id)).toEqual([
      ids[1],
    ]);

    expectError(await search(a.id, `to=${encodeURIComponent(to)}&limit=201`), 400, 'INVALID_REQUEST');
    expectError(await search(a.id, `to=${encodeURIComponent(to)}&limit=0`), 400, 'INVALID_REQUEST');
    expectError(
      await search(a.id, `to=${encodeURIComponent(to)}&cursor=${Buffer.from("x' OR 1=1").toString('base64url')}`),
      400,
      'INVALID_REQUEST',
    );
    expectError(await search(a.id, 'to=not-a-phone&channel=sms'), 400, 'INVALID_REQUEST');
    expectError(await search(a.id, 'channel=sms'), 400, 'INVALID_REQUEST');
    expectError(await search('unknown', `to=${encodeURIComponent(to)}`), 404, 'NOT_FOUND');
  });
});

describe('GET /v1/admin/tenants/:id/messages without `to`', () => {
  it("lists the tenant's messages, every recipient, newest first, a page at a time, never another tenant's", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sent = await t.send(a.apiKey, sms(phone(131 + i)));
      expect(sent.statusCode, sent.body).toBe(202);
      ids.push(sent.json().id);
      t.clock.advance(1);
    }
    await t.send(b.apiKey, sms(phone(131)));

    const all = await search(a.id, '');
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().messages.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
    expect(all.json().messages.map((m: { to: string }) => m.to)).toEqual([4, 3, 2, 1, 0].map((i) => phone(131 + i)));
    expect(all.json().nextCursor).toBeUndefined();

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const response = await search(a.id, `limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(response.statusCode, response.body).toBe(200);
      seen.push(...response.json().messages.map((m: { id: string }) => m.id));
      cursor = response.json().nextCursor;
    } while (cursor && seen.length < 10);
    expect(seen).toEqual([...ids].reverse());

    // A filter without a recipient would scan past every row it drops: refused, naming it.
    const filtered = await search(a.id, 'status=queued');
    expectError(filtered, 400, 'INVALID_REQUEST');
    expect(filtered.json().error.message).toContain('status');
    expectError(await search(a.id, 'limit=201'), 400, 'INVALID_REQUEST');
    expectError(await search('unknown', ''), 404, 'NOT_FOUND');
  });
});

describe('GET /v1/admin/tenants/:id/messages/:messageId', () => {
  it('answers the message with its attempts, receipt and status callbacks; 404 under another tenant', async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const hook = await t.admin('POST', `/v1/admin/tenants/${a.id}/webhooks`, {
      url: 'http://127.0.0.1:9/hook',
      events: ['message.accepted'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const id = (await t.send(a.apiKey, sms(phone(121)))).json().id as string;
    const now = t.clock.now();
    await t.runtime.repositories.messages.recordAttempt({
      messageId: id,
      attemptNo: 1,
      providerId: 'vendor-1',
      startedAt: now,
      finishedAt: now + 20,
      outcome: 'retryable',
      error: 'timeout',
    });

    const detail = await t.admin('GET', `/v1/admin/tenants/${a.id}/messages/${id}`);
    expect(detail.statusCode, detail.body).toBe(200);
    const body = detail.json();
    expect(body).toMatchObject({ id, tenantId: a.id, channel: 'sms', to: phone(121), receipt: null });
    expect(body.deliveryAttempts).toEqual([
      {
        attempt: 1,
        provider: 'vendor-1',
        startedAt: new Date(now).toISOString(),
        finishedAt: new Date(now + 20).toISOString(),
        outcome: 'retryable',
        error: 'timeout',
      },
    ]);
    expect(body.events).toHaveLength(1);
    expect(body.events[0]).toMatchObject({ webhookId: hook.json().id, messageId: id, type: 'message.accepted', status: 'pending' });

    expectError(await t.admin('GET', `/v1/admin/tenants/${b.id}/messages/${id}`), 404, 'NOT_FOUND');
    expectError(await t.admin('GET', `/v1/admin/tenants/${a.id}/messages/unknown`), 404, 'NOT_FOUND');
  });
});

describe('GET /v1/admin/tenants/:id/bans/:channel/:to', () => {
  it("shows the ban and each rule's count without consuming or recording, per tenant", async () => {
    const a = await t.createTenant();
    const b = await t.createTenant();
    const rules = {
      rules: [
        { windowSeconds: 60, limit: 3, banSeconds: 600 },
        { windowSeconds: 3600, limit: 10 },
      ],
    };
    for (const tenant of [a, b]) expect((await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, rules)).statusCode).toBe(200);
    const to = phone(131);
    const url = (tenant: string, spelling = to) => `/v1/admin/tenants/${tenant}/bans/sms/${encodeURIComponent(spelling)}`;

    // Peeks record nothing: three sends still pass after them.
    for (let i = 0; i < 3; i++) {
      const peek = await t.admin('GET', url(a.id));
      expect(peek.statusCode, peek.body).toBe(200);
      expect(peek.json()).toMatchObject({ banned: false, bannedUntil: null, allowed: true, retryAfterMs: 0 });
      expect(peek.json().rules.map((rule: { count: number }) => rule.count)).toEqual([i, i]);
      expect((await t.send(a.apiKey, sms(to))).statusCode).toBe(202);
    }
    const full = (await t.admin('GET', url(a.id, to.slice(3)))).json();
    expect(full).toMatchObject({ recipient: to, banned: false, allowed: false, at: new Date(t.clock.now()).toISOString() });
    expect(full.rules).toEqual([
      { windowSeconds: 60, limit: 3, banSeconds: 600, count: 3 },
      { windowSeconds: 3600, limit: 10, banSeconds: 0, count: 3 },
    ]);

    expectError(await t.send(a.apiKey, sms(to)), 429, 'RATE_LIMITED');
    const banned = (await t.admin('GET', url(a.id))).json();
    expect(banned).toMatchObject({ banned: true, bannedUntil: new Date(t.clock.now() + 600_000).toISOString(), retryAfterMs: 600_000 });
    expect(banned.rules.map((rule: { count: number }) => rule.count)).toEqual([3, 3]);
    t.clock.advance(60_000);
    expect((await t.admin('GET', url(a.id))).json()).toMatchObject({ banned: true, retryAfterMs: 540_000 });

    // The other tenant's recipient of the same number: nothing counted, nothing banned.
    const theirs = (await t.admin('GET', url(b.id))).json();
    expect(theirs).toMatchObject({ banned: false, allowed: true });
    expect(theirs.rules.map((rule: { count: number }) => rule.count)).toEqual([0, 0]);

    expect((await t.admin('DELETE', url(a.id))).json()).toEqual({ lifted: true });
    expect((await t.admin('GET', url(a.id))).json()).toMatchObject({ banned: false, bannedUntil: null });
  });

  it('answers no rules as nothing counted; refuses a bad recipient and an unknown tenant', async () => {
    const a = await t.createTenant();
    const none = await t.admin('GET', `/v1/admin/tenants/${a.id}/bans/email/${encodeURIComponent('Bob+x@Example.com')}`);
    expect(none.statusCode, none.body).toBe(200);
    expect(none.json()).toMatchObject({ channel: 'email', recipient: 'bob@example.com', banned: false, allowed: true, rules: [] });
    expectError(await t.admin('GET', `/v1/admin/tenants/${a.id}/bans/sms/not-a-phone`), 400, 'INVALID_REQUEST');
    expectError(await t.admin('GET', `/v1/admin/tenants/unknown/bans/sms/${encodeURIComponent(phone(1))}`), 404, 'NOT_FOUND');
  });
});

describe('POST /v1/admin/tenants/:id/rules/:channel/preview', () => {
  const preview = (tenant: string, body: unknown, channel = 'sms') =>
    t.admin('POST', `/v1/admin/tenants/${tenant}/rules/${channel}/preview`, body);

  it('replays sends against the given rules: 3/min with a 10-minute ban', async () => {
    const a = await t.createTenant();
    const response = await preview(a.id, {
      rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
      sends: [0, 1, 2, 3, 60_000].map((atMs) => ({ atMs })),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      rules: [{ windowSeconds: 60, limit: 3, banSeconds: 600 }],
      results: [
        { atMs: 0, allowed: true, counts: [0] },
        { atMs: 1, allowed: true, counts: [1] },
        { atMs: 2, allowed: true, counts: [2] },
        { atMs: 3, allowed: false, code: 'RATE_LIMITED', retryAfterMs: 600_000, rule: 0, counts: [3] },
        { atMs: 60_000, allowed: false, code: 'BANNED', retryAfterMs: 540_003, counts: [] },
      ],
    });
  });

  it("uses the channel's stored rules when none are given, and reads and records nothing live", async () => {
    const a = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${a.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1 }] });
    const to = phone(141);
    expect((await t.send(a.apiKey, sms(to))).statusCode).toBe(202);
    // The live recipient is at its limit; the replay starts from nothing.
    const replay = (await preview(a.id, { sends: [{ atMs: 0 }, { atMs: 59_999 }, { atMs: 60_000 }] })).json();
    expect(replay.rules).toEqual([{ windowSeconds: 60, limit: 1, banSeconds: 0 }]);
    expect(replay.results.map((result: { allowed: boolean }) => result.allowed)).toEqual([true, false, true]);
    expect(replay.results[1]).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: 1, rule: 0 });
    const live = (await t.admin('GET', `/v1/admin/tenants/${a.id}/bans/sms/${encodeURIComponent(to)}`)).json();
    expect(live.rules[0].count).toBe(1);
    // No stored rules: every send passes, as admission checks nothing.
    expect((await preview(a.id, { sends: [{ atMs: 0 }, { atMs: 0 }] }, 'email')).json()).toEqual({
      rules: [],
      results: [
        { atMs: 0, allowed: true, counts: [] },
        { atMs: 0, allowed: true, counts: [] },
      ],
    });
  });

  it('refuses sends out of order, too many sends, bad rules and an unknown tenant', async () => {
    const a = await t.createTenant();
    const rules = [{ windowSeconds: 60, limit: 3 }];
    const unordered = expectError(await preview(a.id, { rules, sends: [{ atMs: 5 }, { atMs: 4 }] }), 400, 'INVALID_REQUEST');
    expect(unordered.field).toBe('sends[1].atMs');
    expectError(await preview(a.id, { rules, sends: Array.from({ length: 1001 }, () => ({ atMs: 0 })) }), 400, 'INVALID_REQUEST');
    expectError(await preview(a.id, { rules, sends: [] }), 400, 'INVALID_REQUEST');
    expectError(await preview(a.id, { rules: [{ windowSeconds: 60, limit: 0 }], sends: [{ atMs: 0 }] }), 400, 'INVALID_REQUEST');
    expectError(await preview('unknown', { rules, sends: [{ atMs: 0 }] }), 404, 'NOT_FOUND');
  });
});
