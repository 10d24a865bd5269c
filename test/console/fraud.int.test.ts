/**
 * The console's SMS fraud screen in Debian's chromium against a real sluice (embedded default):
 * a tenant without a policy gets an example in monitor mode; a JSON error and the API's 400 are
 * shown; a saved monitor policy lets an attack on one range through and the screen counts what it
 * would have refused; the message's timeline carries monitor mode's line. Accessible (axe-core),
 * no browser error.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleServer, launchBrowser, missingBrowser, openPage, seriousViolations, startConsoleServer } from './browser.js';

const missing = missingBrowser();
const skip = missing !== undefined && process.env.CI !== 'true';

let server: ConsoleServer;
let browser: Browser;
let page: Page;
let errors: string[];

describe.skipIf(skip)(`the console's SMS fraud screen in chromium${skip ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    if (missing) throw new Error(`CI=true and ${missing}`);
    server = await startConsoleServer();
    browser = await launchBrowser();
    ({ page, errors } = await openPage(browser));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const api = async (method: string, path: string, token: string, body?: unknown) =>
    fetch(new URL(path, server.baseUrl), {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const checkPage = async (what: string) => {
    expect(await seriousViolations(page), `axe on ${what}`).toEqual([]);
    expect(errors, `browser errors on ${what}`).toEqual([]);
  };

  it("shows a tenant's policy, saves one in monitor mode, and what it would have refused by rule and on the message", async () => {
    const tenant = (await (await api('POST', '/v1/admin/tenants', server.adminToken, { name: `fraud-${Date.now()}` })).json()) as {
      id: string;
      apiKey: string;
    };
    expect((await api('PUT', '/v1/admin/prices/sms', server.adminToken, { currency: 'USD', default: 0.05 })).status).toBe(200);

    await page.goto(`${server.baseUrl}/console`);
    await page.getByLabel('Admin token').fill(server.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tenants', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'SMS fraud', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'SMS fraud' }).waitFor();
    await page.goto(`${server.baseUrl}/console/#/fraud/${tenant.id}`);
    await page.getByRole('heading', { name: 'Policy (none yet)' }).waitFor();
    await page.getByText("No policy: this tenant's SMS are not judged.").waitFor();
    const editor = page.getByLabel('Policy (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('"mode": "monitor"');
    await checkPage('the fraud screen without a policy');

    await editor.fill('{"mode": ');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not JSON');
    await editor.fill('{"countries": {"allow": ["CN", "ZZ"]}}');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('INVALID_REQUEST');
    await editor.fill(JSON.stringify({ mode: 'monitor', prefixes: [{ digits: 8, windowSeconds: 3600, limit: 1 }] }));
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved, mode monitor');
    await page.getByRole('heading', { name: 'Policy, monitor' }).waitFor();

    // An attack on one range: monitor mode accepts all three, and would have refused the last two.
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const sent = await api('POST', '/v1/messages', tenant.apiKey, { channel: 'sms', to: `+44740012300${i}`, body: 'code' });
      expect(sent.status).toBe(202);
      ids.push(((await sent.json()) as { id: string }).id);
    }
    await page.getByRole('button', { name: 'Refresh' }).click();
    const prefixRow = page.getByRole('row', { name: /^prefix/ });
    await expect.poll(() => prefixRow.textContent()).toBe('prefix02');
    await checkPage('the fraud screen with a policy');

    await page.goto(`${server.baseUrl}/console/#/messages/${tenant.id}/${ids[2]}`);
    await page
      .getByRole('listitem')
      .filter({ hasText: 'fraud (monitor): would refuse, prefix' })
      .filter({ hasText: 'FRAUD_SUSPECTED' })
      .waitFor();
    await checkPage('a message with a monitor line');
  }, 120_000);
});
