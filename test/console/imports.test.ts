/**
 * The console talks only to the public API, through `sluice/client`: its modules import Preact,
 * each other, the client, and the vocabulary modules (channels, algorithms, provider kind names,
 * statuses and event types), and call no `fetch` of their own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const consoleSrc = fileURLToPath(new URL('../../console/src/', import.meta.url));
const ALLOWED_OUTSIDE = [
  '../src/client/index.js',
  '../src/core/channels.js',
  '../src/limiter/types.js',
  '../src/providers/kind-names.js',
  '../src/core/lifecycle.js',
];

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

  it('takes from src/ only vocabulary modules that import nothing at run time (the client aside): the browser bundle gets no Node code', () => {
    const root = join(consoleSrc, '..');
    const runtimeImports = ALLOWED_OUTSIDE.filter((path) => path !== '../src/client/index.js').flatMap((path) => {
      const text = readFileSync(join(root, path.replace(/\.js$/, '.ts')), 'utf8');
      return [...text.matchAll(/^(?:(?:import|export)\s(?!type\s)[^;]*?from\s+|import\s+)'([^']+)'/gms)].map(
        ([, target]) => `${path} → ${target}`,
      );
    });
    expect(runtimeImports).toEqual([]);
  });

  it('calls no fetch, XMLHttpRequest or storage but through session.ts', () => {
    const found = sources
      .filter((file) => !file.endsWith('session.ts'))
      .filter((file) => /\bfetch\(|XMLHttpRequest|localStorage|sessionStorage|document\.cookie/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(consoleSrc, file));
    expect(found).toEqual([]);
  });
});
