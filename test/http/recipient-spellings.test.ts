/**
 * Recipients written differently are one recipient to frequency rules, bans and blacklists (their
 * canonical key, docs/api.md "Recipients"), while a message still goes to the address as written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, sms, startApp, type TestApp } from './support.js';

let t: TestApp;
const email = (to: string) => ({ channel: 'email', to, subject: 's', body: 'b' });
const hook = (to: string) => ({ channel: 'webhook', to, body: 'b' });
const rules = (limit: number, banSeconds = 0) => ({ rules: [{ windowSeconds: 60, limit, banSeconds }] });

beforeAll(async () => {
  t = await startApp();
});
afterAll(async () => {
  await t?.close();
});

async function tenantWithRules(channel: string, limit: number, banSeconds = 0) {
  const tenant = await t.createTenant();
  const put = await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/${channel}`, rules(limit, banSeconds));
  expect(put.statusCode, put.body).toBe(200);
  return tenant;
}

describe('email spellings (one mailbox, one count)', () => {
  it('after 3 sends to alice@example.com the 4th is 429 in any spelling; each is delivered as written', async () => {
    const { apiKey } = await tenantWithRules('email', 3);
    for (let i = 0; i < 3; i++) expect((await t.send(apiKey, email('alice@example.com'))).statusCode).toBe(202);
    for (const spelling of ['Alice@example.com', 'ALICE@example.com', 'alice+1@example.com', 'Alice+news@Example.COM']) {
      expectError(await t.send(apiKey, email(spelling)), 429, 'RATE_LIMITED');
    }
    // Another mailbox is another count; what is stored (and sent to) keeps the local part's spelling.
    const other = await t.send(apiKey, email('Alice.B+news@Example.COM'));
    expect(other.statusCode, other.body).toBe(202);
    expect((await t.call(apiKey, 'GET', `/v1/messages/${other.json().id}`)).json().to).toBe('Alice.B+news@example.com');
  });

  it('Gmail ignores dots, and googlemail.com is gmail.com', async () => {
    const { apiKey } = await tenantWithRules('email', 2);
    expect((await t.send(apiKey, email('john.doe@gmail.com'))).statusCode).toBe(202);
    expect((await t.send(apiKey, email('JohnDoe+x@gmail.com'))).statusCode).toBe(202);
    expectError(await t.send(apiKey, email('j.o.h.n.doe@googlemail.com')), 429, 'RATE_LIMITED');
  });

  it('a ban is one ban for every spelling, and lifted by any', async () => {
    const tenant = await tenantWithRules('email', 1, 600);
    expect((await t.send(tenant.apiKey, email('carol@example.com'))).statusCode).toBe(202);
    expectError(await t.send(tenant.apiKey, email('Carol+1@example.com')), 429, 'RATE_LIMITED');
    expectError(await t.send(tenant.apiKey, email('CAROL@example.com')), 429, 'BANNED');
    const lift = await t.admin(
      'DELETE',
      `/v1/admin/tenants/${tenant.id}/bans/email/${encodeURIComponent('Carol+x@Example.com')}?resetCounts=true`,
    );
    expect(lift.json()).toEqual({ lifted: true });
    expect((await t.send(tenant.apiKey, email('carol@example.com'))).statusCode).toBe(202);
  });

  it('a blacklisted bob@example.com refuses Bob@example.com and bob+x@example.com', async () => {
    const tenant = await t.createTenant();
    const add = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, { channel: 'email', recipients: ['bob@example.com'] });
    expect(add.json()).toEqual({ added: ['bob@example.com'], invalid: [] });
    for (const spelling of ['Bob@example.com', 'bob+x@example.com', 'BOB+promo@EXAMPLE.com']) {
      expectError(await t.send(tenant.apiKey, email(spelling)), 403, 'BLACKLISTED');
    }
    // Added in another spelling, the entry is the key: any spelling removes it.
    const global = await t.admin('POST', '/v1/admin/blacklist', { recipients: ['Dave.Smith+Promo@GoogleMail.com'] });
    expect(global.json()).toEqual({ added: ['davesmith@gmail.com'], invalid: [] });
    expectError(await t.send(tenant.apiKey, email('davesmith@gmail.com')), 403, 'BLACKLISTED');
    expect((await t.admin('DELETE', '/v1/admin/blacklist', { recipients: ['DaveSmith@gmail.com'] })).json()).toEqual({
      removed: 1,
      invalid: [],
    });
    expect((await t.send(tenant.apiKey, email('dave.smith@gmail.com'))).statusCode).toBe(202);
  });
});

describe('blacklist entries for every channel (*) are read as each channel reads a send', () => {
  it('138.0013.8002 is a phone number and a bot name: both are refused', async () => {
    const { apiKey } = await t.createTenant();
    const add = await t.admin('POST', '/v1/admin/blacklist', { recipients: ['138.0013.8002'] });
    expect(add.json()).toEqual({ added: ['+8613800138002', '138.0013.8002'], invalid: [] });
    expectError(await t.send(apiKey, sms('13800138002')), 403, 'BLACKLISTED');
    expectError(await t.send(apiKey, sms('+86 138 0013 8002')), 403, 'BLACKLISTED');
    expectError(await t.send(apiKey, hook('138.0013.8002')), 403, 'BLACKLISTED');
    // Another bot name (the same digits without dots) is another recipient.
    expect((await t.send(apiKey, hook('13800138002'))).statusCode).toBe(202);

    const listed = (await t.admin('GET', '/v1/admin/blacklist?channel=*'))
      .json()
      .entries.map((entry: { recipient: string }) => entry.recipient);
    expect(listed).toEqual(expect.arrayContaining(['+8613800138002', '138.0013.8002']));
    expect((await t.admin('DELETE', '/v1/admin/blacklist', { recipients: ['138.0013.8002'] })).json()).toEqual({ removed: 2, invalid: [] });
    expect((await t.send(apiKey, sms('13800138002'))).statusCode).toBe(202);
    expect((await t.send(apiKey, hook('138.0013.8002'))).statusCode).toBe(202);
  });

  it('numbers a send accepts are accepted: (+86) and fullwidth digits; a text no channel reads is invalid', async () => {
    const tenant = await t.createTenant();
    const add = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, {
      recipients: ['(+86) 13800138004', '＋８６ １３８００１３８００５', 'not a recipient'],
    });
    expect(add.json()).toEqual({ added: ['+8613800138004', '+8613800138005'], invalid: ['not a recipient'] });
    expectError(await t.send(tenant.apiKey, sms('13800138004')), 403, 'BLACKLISTED');
    expectError(await t.send(tenant.apiKey, sms('+8613800138005')), 403, 'BLACKLISTED');
  });
});

describe('webhook spellings (one hook, one count)', () => {
  it('a URL with a fragment, an escaped unreserved character or an empty query is the same target', async () => {
    const { apiKey } = await tenantWithRules('webhook', 1);
    const sent = await t.send(apiKey, hook('https://hooks.example.com/x'));
    expect(sent.statusCode, sent.body).toBe(202);
    for (const spelling of [
      'https://hooks.example.com/x#1',
      'https://hooks.example.com/%78',
      'https://hooks.example.com/x?',
      'https://HOOKS.example.com:443/%78?#a',
    ]) {
      expectError(await t.send(apiKey, hook(spelling)), 429, 'RATE_LIMITED');
    }
    // A query is part of the target.
    expect((await t.send(apiKey, hook('https://hooks.example.com/x?room=2'))).statusCode).toBe(202);
  });

  it('bot names are one target in any case, delivered as written', async () => {
    const { apiKey } = await tenantWithRules('webhook', 1);
    const sent = await t.send(apiKey, hook('OPS-ALERTS'));
    expect(sent.statusCode, sent.body).toBe(202);
    expect((await t.call(apiKey, 'GET', `/v1/messages/${sent.json().id}`)).json().to).toBe('OPS-ALERTS');
    expectError(await t.send(apiKey, hook('ops-alerts')), 429, 'RATE_LIMITED');
  });

  it('blacklisted in one spelling, refused in every other', async () => {
    const tenant = await t.createTenant();
    const add = await t.admin('POST', `/v1/admin/tenants/${tenant.id}/blacklist`, {
      channel: 'webhook',
      recipients: ['OPS-ALERTS', 'https://hooks.example.com/y#frag'],
    });
    expect(add.json()).toEqual({ added: ['ops-alerts', 'https://hooks.example.com/y'], invalid: [] });
    expectError(await t.send(tenant.apiKey, hook('ops-alerts')), 403, 'BLACKLISTED');
    expectError(await t.send(tenant.apiKey, hook('Ops-Alerts')), 403, 'BLACKLISTED');
    expectError(await t.send(tenant.apiKey, hook('https://hooks.example.com/%79?')), 403, 'BLACKLISTED');
  });
});
