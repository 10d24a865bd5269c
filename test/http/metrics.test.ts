import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phone, sms, startApp, type TestApp } from './support.js';

describe('GET /metrics on the embedded default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('counts decisions, their latency, rejections and HTTP requests', async () => {
    const tenant = await t.createTenant();
    await t.admin('PUT', `/v1/admin/tenants/${tenant.id}/rules/sms`, { rules: [{ windowSeconds: 60, limit: 1, banSeconds: 0 }] });
    expect((await t.send(tenant.apiKey, sms(phone(1)))).statusCode).toBe(202);
    expect((await t.send(tenant.apiKey, sms(phone(1)))).statusCode).toBe(429);
    // Refused before its body is read, a send with a wrong key is still an admission rejection by auth.
    expect((await t.send('sk_not_a_key', sms(phone(2)))).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/v1/messages/x', headers: { authorization: 'Bearer sk_no' } })).statusCode).toBe(401);
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    expect(text).toMatch(/sluice_decisions_total\{outcome="OK",channel="sms",rule="none"\} 1/);
    expect(text).toMatch(/sluice_decisions_total\{outcome="RATE_LIMITED",channel="sms",rule="0"\} 1/);
    expect(text).toMatch(/sluice_decision_duration_seconds_count\{store="memory",outcome="OK"\} 1/);
    expect(text).toMatch(/sluice_admission_rejections_total\{interceptor="frequency",code="RATE_LIMITED"\} 1/);
    expect(text).toMatch(/sluice_admission_rejections_total\{interceptor="auth",code="UNAUTHORIZED"\} 1\n/);
    expect(text).toContain('sluice_http_request_duration_seconds_count{route="/v1/messages",method="POST",status_code="202"} 1');
    expect(text).toContain('sluice_http_request_duration_seconds_count{route="/v1/messages",method="POST",status_code="429"} 1');
    expect(text).not.toContain('8613800000001');
  });
});
