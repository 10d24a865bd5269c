import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
// The child runs in an empty directory, where `--import tsx` would not resolve: name the loader by path.
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/**
 * The README quick start on a fresh directory: `serve --demo` on the embedded default prints a curl
 * line with a key; sending it prints the message through the console provider; the fourth send to
 * one number within a minute is 429.
 */
describe('quick start (serve --demo)', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('goes from nothing to a printed message and a 429 on the fourth send', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sluice-quickstart-'));
    const port = await freePort();
    // The default log level, as the README runs it.
    const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_PORT: String(port) };
    for (const key of Object.keys(env)) if (key.startsWith('SLUICE_') && key !== 'SLUICE_PORT') delete env[key];
    child = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--demo'], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 300 && !pattern.test(output); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      return pattern.exec(output);
    };
    const curl = await waitFor(/curl -si (\S+) -H 'Authorization: Bearer (sk_[\w-]+)'/);
    expect(curl, output).not.toBeNull();
    const [, url, key] = curl!;
    const send = () =>
      fetch(url!, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ channel: 'sms', to: '+8613800138000', template: 'otp', params: { code: '1234' } }),
      });
    const first = await send();
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    const printed = await waitFor(new RegExp(`\\[sluice sms\\] id=${id} .*to=\\+8613800138000 .*body="Your code is 1234"`));
    expect(printed).not.toBeNull();
    // The README shows this very line, its id and tenant aside.
    const shape = (line: string) => line.replace(/id=\S+/, 'id=ID').replace(/tenant=\S+/, 'tenant=TENANT');
    const sample = /^# (\[sluice sms\] .*)$/m.exec(readFileSync(new URL('../../README.md', import.meta.url), 'utf8'))?.[1];
    expect(shape(sample ?? '')).toBe(shape(printed![0]));
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    const fourth = await send();
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await fourth.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    // At `info` requests are counted by the metrics, not logged one by one.
    expect(output).not.toContain('incoming request');
    expect(output).not.toContain('request completed');
  }, 60_000);
});
