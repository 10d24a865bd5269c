import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

const sluice = (...args: string[]) => run(process.execPath, ['--import', tsx, cli, ...args], { env: { PATH: process.env.PATH ?? '' } });

/** `sluice --version` (and `-V`) prints package.json's version alone and exits 0; the packed build is checked in test/package/. */
describe('sluice --version', () => {
  it.each(['--version', '-V'])('%s prints the version', async (flag) => {
    const { stdout } = await sluice(flag);
    expect(stdout).toBe(`${version}\n`);
  });
});

describe('sluice help', () => {
  it('marks the options a command requires', async () => {
    const { stdout } = await sluice('provider', 'add', '--help');
    const line = (option: string) => stdout.split('\n').find((text) => text.trimStart().startsWith(option)) ?? '';
    for (const option of ['--scope', '--channel', '--kind', '--name', '--qps']) expect(line(option), option).toContain('(required)');
    expect(line('--qps')).toContain("the vendor's QPS contract");
    expect(line('--priority')).not.toContain('(required)');
  });
});
