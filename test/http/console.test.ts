/**
 * /console serves the files of its build directory and nothing else: index.html revalidated, hashed
 * assets cached for good, a strict Content-Security-Policy, and a clear 404 when nothing is built.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { CONSOLE_CSP } from '../../src/http/console.js';
import { startApp, type TestApp } from './support.js';

let t: TestApp;
let dir: string;
let built: FastifyInstance;
let missing: FastifyInstance;
beforeAll(async () => {
  t = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
  const assets = join(dir, 'build');
  mkdirSync(join(assets, 'assets'), { recursive: true });
  writeFileSync(
    join(assets, 'index.html'),
    '<!doctype html><title>sluice</title><script type="module" src="/console/assets/index-a1b2.js"></script>',
  );
  writeFileSync(join(assets, 'assets', 'index-a1b2.js'), 'console.log(1)');
  writeFileSync(join(assets, 'assets', 'index-a1b2.js.map'), '{}');
  writeFileSync(join(dir, 'secret.txt'), 'outside the build');
  built = await buildHttpApp(t.runtime.http, { consoleDir: assets });
  missing = await buildHttpApp(t.runtime.http, { consoleDir: join(dir, 'nothing') });
});
afterAll(async () => {
  await built?.close();
  await missing?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('/console', () => {
  it('redirects /console to /console/, which is index.html: no-cache, the CSP, nosniff', async () => {
    const bare = await built.inject({ method: 'GET', url: '/console' });
    expect(bare.statusCode).toBe(302);
    expect(bare.headers.location).toBe('/console/');
    const index = await built.inject({ method: 'GET', url: '/console/' });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.body).toContain('<title>sluice</title>');
  });

  it('hashed assets are cached for a year with their content type; source maps and other files are not served', async () => {
    const script = await built.inject({ method: 'GET', url: '/console/assets/index-a1b2.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await built.inject({ method: 'GET', url: '/console/assets/index-a1b2.js.map' })).statusCode).toBe(404);
    expect((await built.inject({ method: 'GET', url: '/console/assets/other.js' })).statusCode).toBe(404);
  });

  it('no path reaches outside the build directory', async () => {
    for (const url of [
      '/console/../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/..%2fsecret.txt',
      '/console/assets/../../secret.txt',
    ]) {
      const response = await built.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).not.toContain('outside the build');
    }
  });

  it('every answer under /console carries the CSP and the framing and sniffing guards: files, the redirect, 404s', async () => {
    for (const [app, url] of [
      [built, '/console'],
      [built, '/console/'],
      [built, '/console/nope'],
      [missing, '/console/'],
    ] as const) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['referrer-policy'], url).toBe('no-referrer');
    }
  });

  it('without a build, says to run npm run build; is hidden from the OpenAPI document', async () => {
    const response = await missing.inject({ method: 'GET', url: '/console/' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: { code: 'NOT_FOUND', message: expect.stringContaining('npm run build') } });
    const document = (await built.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });

  it('SLUICE_CONSOLE=false: /console is not served', async () => {
    const off = await buildHttpApp({ ...t.runtime.http, console: false }, { consoleDir: join(dir, 'build') });
    try {
      expect((await off.inject({ method: 'GET', url: '/console/' })).statusCode).toBe(404);
      expect((await off.inject({ method: 'GET', url: '/console/' })).body).not.toContain('<title>');
    } finally {
      await off.close();
    }
  });
});
