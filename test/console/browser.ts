/**
 * What the console's browser tests share: a real sluice serving a fresh console build, Debian's
 * chromium driven by playwright-core (no browser download), axe-core's checks, the keyboard walk,
 * and the screenshots (on failure, and into docs/console/ when SLUICE_UPDATE_SCREENSHOTS=1).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AxeResults } from 'axe-core';
import type { FastifyInstance } from 'fastify';
import { type Browser, chromium, type Page } from 'playwright-core';
import { build } from 'vite';
import { buildHttpApp } from '../../src/http/app.js';
import { createRuntime, type Runtime } from '../../src/main/runtime.js';
import { startWorker } from '../../src/main/worker.js';
import { createConsoleProvider } from '../../src/providers/console.js';
import { loadSettings } from '../../src/settings/settings.js';

export const CHROMIUM = process.env.SLUICE_TEST_CHROMIUM ?? '/usr/bin/chromium';
const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Why the browser tests cannot run here, or undefined when they can. In CI (`CI=true`) a missing
 * browser is a failure, not a skip: the caller throws this reason instead of skipping.
 */
export function missingBrowser(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `no chromium at ${CHROMIUM} (apt-get install chromium, or set SLUICE_TEST_CHROMIUM)`;
}

export interface ConsoleServer {
  baseUrl: string;
  adminToken: string;
  app: FastifyInstance;
  runtime: Runtime;
  close(): Promise<void>;
}

/** Builds the console with Vite into a temp dir (the sources as they are now, not a stale dist/) and serves it from a real sluice on a loopback port. */
export async function startConsoleServer(): Promise<ConsoleServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-console-test-'));
  const assets = join(dir, 'console');
  await build({ configFile: join(root, 'console/vite.config.ts'), build: { outDir: assets, emptyOutDir: true }, logLevel: 'error' });
  const adminToken = `console-test-${crypto.randomUUID()}`;
  const settings = loadSettings({
    SLUICE_DB_URL: `sqlite:${join(dir, 'db.sqlite')}`,
    SLUICE_SECRET_KEY_FILE: join(dir, 'secret.key'),
    SLUICE_ADMIN_TOKEN: adminToken,
    SLUICE_LOG_LEVEL: 'silent',
    // The test's webhook endpoint listens on loopback.
    SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const runtime = await createRuntime(settings);
  const app = await buildHttpApp(runtime.http, { consoleDir: assets });
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  // Delivery too, through the console provider (as `serve` without providers), its lines kept here:
  // a message gets its attempts and its status callbacks, as the console's timeline shows them.
  const delivered: string[] = [];
  const worker = startWorker(
    runtime,
    createConsoleProvider({ id: 'console', channel: 'sms', out: { write: (line) => delivered.push(line) } }),
  );
  return {
    baseUrl,
    adminToken,
    app,
    runtime,
    async close() {
      await app.close();
      await worker.stop();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function launchBrowser(): Promise<Browser> {
  // As root (CI containers) chromium needs --no-sandbox.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'], timeout: 30_000 });
}

/** A page that records every console error and uncaught exception (a CSP refusal is one). */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // The browser logs every 4xx it fetched: from the API these are answers the console shows
    // (a NOT_FOUND quiet hours is "none set", a 401 a wrong token). A file of the console's own that
    // fails to load is still an error.
    const url = message.location().url;
    if (message.text().startsWith('Failed to load resource') && url && new URL(url).pathname.startsWith('/v1/')) return;
    errors.push(`console: ${message.text()} (${url})`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  return { page, errors };
}

const axeSource = readFileSync(join(root, 'node_modules/axe-core/axe.min.js'), 'utf8');

// The functions run in the page are written as source text: the tests' type check has no DOM library.

const RUN_AXE = "window.axe.run(document, { resultTypes: ['violations'] })";

/** axe-core's serious and critical violations on the page as it is (its source evaluated through the DevTools protocol, which the page's CSP does not govern). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const results = await page.evaluate<AxeResults>(RUN_AXE);
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}

export interface Focused {
  tag: string;
  text: string;
  inNav: boolean;
  inMain: boolean;
  /** Whether the focused element shows an outline (the focus ring). */
  outlined: boolean;
}

const FOCUSED = `(() => {
  const element = document.activeElement;
  const style = getComputedStyle(element);
  return {
    tag: element.tagName.toLowerCase(),
    text: (element.getAttribute('aria-label') ?? element.labels?.[0]?.textContent ?? element.textContent ?? '').trim(),
    inNav: element.closest('nav') !== null,
    inMain: element.closest('main') !== null,
    outlined: style.outlineStyle !== 'none' && style.outlineWidth !== '0px',
  };
})()`;

/** What Tab reaches from the top of the page, in order (up to `presses`). */
export async function tabWalk(page: Page, presses = 40): Promise<Focused[]> {
  await page.evaluate('document.activeElement && document.activeElement.blur()');
  const reached: Focused[] = [];
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press('Tab');
    reached.push(await page.evaluate<Focused>(FOCUSED));
  }
  return reached;
}

/** Saves a screenshot of the page into `dir` (made if needed); resolves its path. */
export async function screenshot(page: Page, dir: string, name: string, fullPage = false): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

export const DOCS_SCREENSHOTS = join(root, 'docs/console');
