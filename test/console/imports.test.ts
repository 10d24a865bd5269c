/**
 * The console talks only to the public API, through `sluice/client`: its modules import Preact,
 * each other, the client, and the two vocabulary modules (channels, algorithms), and call no
 * `fetch` of their own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const consoleSrc = fileURLToPath(new URL('../../console/src/', import.meta.url));
const ALLOWED_OUTSIDE = ['../src/client/index.js', '../src/core/channels.js', '../src/limiter/types.js', '../src/storage/schema.js'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
}

describe('console imports', () => {
  const sources = files(consoleSrc);

  it('imports only preact, its own modules, sluice/client and the vocabulary', () => {
    const outside: string[] = [];
    for (const file of sources) {
      const text = readFileSync(file, 'utf8');
      for (const [, target] of text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
        if (target!.startsWith('preact')) continue;
        if (!target!.startsWith('.')) {
          outside.push(`${relative(consoleSrc, file)} → ${target}`);
          continue;
        }
        const resolved = relative(join(consoleSrc, '..'), join(file, '..', target!));
        if (resolved.startsWith('src/') || ALLOWED_OUTSIDE.includes(resolved)) continue;
        outside.push(`${relative(consoleSrc, file)} → ${target}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('calls no fetch, XMLHttpRequest or storage but through session.ts', () => {
    const found = sources
      .filter((file) => !file.endsWith('session.ts'))
      .filter((file) => /\bfetch\(|XMLHttpRequest|localStorage|sessionStorage|document\.cookie/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(consoleSrc, file));
    expect(found).toEqual([]);
  });
});
