import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The README's library example must run as written (only the package import is pointed at src/). */
describe('README', () => {
  it('limiter example runs and prints what its comment says', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## The limiter as a library'));
    const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toContain("from '@sluice/limiter'");
    const source = new URL('../src/limiter/index.ts', import.meta.url).pathname;
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-readme-')), 'example.mts');
    writeFileSync(file, code!.replace("'@sluice/limiter'", JSON.stringify(source)));
    const output = execFileSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8' });
    expect(output.trim().split('\n')).toEqual(['1 OK 0', '2 OK 0', '3 OK 0', '4 RATE_LIMITED 600000']);
  });
});

describe('README CLI table', () => {
  it('has a row for every command of `sluice`', async () => {
    const { createProgram } = await import('../src/cli/program.js');
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## CLI'), readme.indexOf('### After the demo'));
    const rows = section.split('\n').filter((line) => line.startsWith('| `'));
    const named = new Set(rows.map((row) => /^\| `-*([\w-]+)/.exec(row)?.[1]));
    const commands = createProgram().commands.map((command) => command.name());
    expect(commands.length).toBeGreaterThan(10);
    expect(commands.filter((name) => !named.has(name))).toEqual([]);
    expect(named.has('version')).toBe(true);
  });
});
