import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports of a module (static `import`/`export … from`, type-only ones included), resolved to .ts files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)].map((match) =>
    resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
  );
}

const files = sourceFiles(src);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('architecture', () => {
  it('src/limiter/ imports nothing from the rest of src/ (it is the standalone library)', () => {
    const limiter = join(src, 'limiter');
    const leaks = files
      .filter((file) => file.startsWith(limiter))
      .flatMap((file) =>
        (graph.get(file) ?? [])
          .filter((target) => !target.startsWith(limiter))
          .map((target) => `${relative(src, file)} → ${relative(src, target)}`),
      );
    expect(leaks).toEqual([]);
  });

  it('every relative import resolves to a file', () => {
    // The scan sees the imports at all (a broken pattern would make the other checks pass vacuously).
    expect([...graph.values()].flat().length).toBeGreaterThan(100);
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${relative(src, file)} → ${relative(src, target)}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no import cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'visiting');
      stack.push(file);
      for (const target of graph.get(file) ?? []) {
        if (state.get(target) === 'visiting')
          cycles.push([...stack.slice(stack.indexOf(target)), target].map((f) => relative(src, f)).join(' → '));
        else if (!state.has(target)) visit(target);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
