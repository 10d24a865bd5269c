import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LuaScript, type ScriptClient } from '../../src/limiter/index.js';

function fakeClient(cached: Set<string>): ScriptClient & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async evalsha(sha1, numkeys, ...rest) {
      calls.push(`evalsha ${numkeys} ${rest.join(' ')}`);
      if (!cached.has(sha1)) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      return 'cached';
    },
    async eval(script, numkeys, ...rest) {
      calls.push(`eval ${numkeys} ${rest.join(' ')}`);
      cached.add(new LuaScript('x', script).sha);
      return 'evaluated';
    },
  };
}

describe('LuaScript', () => {
  it('falls back to EVAL on NOSCRIPT, then uses EVALSHA', async () => {
    const script = new LuaScript('t', 'return 1');
    const client = fakeClient(new Set());
    expect(await script.run(client, 2, ['k1', 'k2', 'a', 3])).toBe('evaluated');
    expect(await script.run(client, 2, ['k1', 'k2', 'a', 3])).toBe('cached');
    expect(client.calls).toEqual(['evalsha 2 k1 k2 a 3', 'eval 2 k1 k2 a 3', 'evalsha 2 k1 k2 a 3']);
  });

  it('passes other errors through', async () => {
    const script = new LuaScript('t', 'return 1');
    const client: ScriptClient = {
      evalsha: () => Promise.reject(new Error('ERR wrong number of arguments')),
      eval: () => Promise.resolve('never'),
    };
    await expect(script.run(client, 0, [])).rejects.toThrow(/wrong number/);
  });

  it('the lock scripts (loaded by delivery through the library) have headers naming KEYS, ARGV and the return value', async () => {
    const folder = new URL('../../src/infra/lock/scripts/', import.meta.url);
    for (const name of ['renew', 'release']) {
      const { source } = LuaScript.fromFile(folder, name);
      expect(source).toMatch(/KEYS\[1\]/);
      expect(source).toMatch(/ARGV\[1\]/);
      expect(source).toMatch(/Returns/);
    }
  });

  it('a script missing from dist/ is read from the same path under src/', () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-script-'));
    try {
      mkdirSync(join(root, 'src/delivery/lock/scripts'), { recursive: true });
      mkdirSync(join(root, 'dist/delivery/lock/scripts'), { recursive: true });
      writeFileSync(join(root, 'src/delivery/lock/scripts/probe.lua'), 'return "src"');
      const folder = pathToFileURL(join(root, 'dist/delivery/lock/scripts/'));
      expect(LuaScript.fromFile(folder, 'probe').source).toBe('return "src"');
      writeFileSync(join(root, 'dist/delivery/lock/scripts/probe.lua'), 'return "dist"');
      expect(LuaScript.fromFile(folder, 'probe').source).toBe('return "dist"');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('joins `--- @include` pieces, relative to the file naming them, recursively, each once', () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-script-'));
    try {
      mkdirSync(join(root, 'scripts/includes'), { recursive: true });
      writeFileSync(join(root, 'scripts/op-1.lua'), '--- @include "includes/a"\n--- @include "includes/b"\nreturn a() + b()\n');
      writeFileSync(join(root, 'scripts/includes/a.lua'), '--- @include "shared"\nlocal function a() return shared end\n');
      writeFileSync(join(root, 'scripts/includes/b.lua'), '  --- @include "shared"\nlocal function b() return 2 * shared end\n');
      writeFileSync(join(root, 'scripts/includes/shared.lua'), 'local shared = 1\n');
      const script = LuaScript.fromFile(pathToFileURL(join(root, 'scripts/')), 'op-1');
      expect(script.source).toBe(
        'local shared = 1\nlocal function a() return shared end\n\nlocal function b() return 2 * shared end\nreturn a() + b()\n',
      );
      expect(script.sha).toBe(new LuaScript('op-1', script.source).sha);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a missing piece names the script and the include', () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-script-'));
    try {
      writeFileSync(join(root, 'op-1.lua'), '--- @include "includes/absent"\nreturn 1\n');
      expect(() => LuaScript.fromFile(pathToFileURL(`${root}/`), 'op-1')).toThrow(/include "includes\/absent" of .*op-1\.lua not found/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
