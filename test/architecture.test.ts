/**
 * The layers of src/ and what each may import, declared once (docs/architecture.md explains
 * them), checked on every relative import, type-only ones included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/**
 * Every unit (a top-level folder of src/, or a sub-folder named here) and the units it may import.
 * Lower layers first; a unit imports only units above it in this list, so no cycle can form.
 */
const LAYERS: Record<string, readonly string[]> = {
  limiter: [],
  core: [],
  settings: ['core'],
  metrics: ['core', 'limiter'],
  infra: ['core', 'settings', 'limiter'],
  broker: ['core', 'settings'],
  providers: ['core', 'infra', 'limiter'],
  storage: ['core', 'limiter', 'providers'],
  admission: ['core', 'limiter'],
  'admission/adapters': ['admission', 'core', 'infra', 'limiter', 'settings', 'storage'],
  delivery: ['broker', 'core', 'infra', 'limiter', 'metrics', 'providers', 'settings', 'storage'],
  services: ['admission', 'core', 'infra', 'limiter', 'providers', 'storage'],
  api: ['admission', 'core', 'limiter', 'providers', 'services'],
  http: ['admission', 'api', 'core', 'infra', 'limiter', 'providers', 'services', 'settings'],
  client: ['api', 'core'],
  main: [
    'admission',
    'admission/adapters',
    'api',
    'broker',
    'core',
    'delivery',
    'http',
    'infra',
    'limiter',
    'metrics',
    'providers',
    'services',
    'settings',
    'storage',
  ],
  cli: ['admission', 'api', 'core', 'http', 'infra', 'limiter', 'main', 'providers', 'services', 'settings', 'storage'],
};

const SUB_UNITS = Object.keys(LAYERS).filter((name) => name.includes('/'));

/** The unit a file under src/ belongs to: its deepest declared folder; undefined for a file outside every unit. */
function unitOf(file: string): string | undefined {
  const parts = relative(src, file).split(sep);
  if (parts.length < 2) return undefined;
  const sub = SUB_UNITS.find((name) => parts.slice(0, name.split('/').length).join('/') === name);
  return sub ?? (parts[0] && parts[0] in LAYERS ? parts[0] : undefined);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The console's modules (.ts and .tsx), which sit outside src/ and import from it by relative paths. */
function consoleSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return consoleSources(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** Relative imports of a module (static `import`/`export … from`, type-only ones included), resolved to .ts files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms)].map((match) =>
    resolve(dirname(file), match[1]!.replace(/\.js$/, '.ts')),
  );
}

/** The imports between units that `layers` does not allow, as `from-unit: file → file`. */
function forbiddenImports(graph: ReadonlyMap<string, readonly string[]>, layers: Record<string, readonly string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = unitOf(file);
    for (const target of targets) {
      const to = unitOf(target);
      if (from === to) continue;
      if (from === undefined || to === undefined || !layers[from]?.includes(to)) {
        found.push(`${from ?? '(no unit)'} → ${to ?? '(no unit)'}: ${relative(src, file)} → ${relative(src, target)}`);
      }
    }
  }
  return found;
}

/** Units whose declared imports form a cycle (a unit that, following the table, reaches itself). */
function layerCycles(layers: Record<string, readonly string[]>): string[] {
  return Object.keys(layers).filter((unit) => {
    const seen = new Set<string>();
    const reaches = (at: string): boolean =>
      (layers[at] ?? []).some((next) => {
        if (next === unit) return true;
        if (seen.has(next)) return false;
        seen.add(next);
        return reaches(next);
      });
    return reaches(unit);
  });
}

const files = sourceFiles(src);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('architecture', () => {
  it('every file of src/ is in a declared unit (no grab-bag at the root)', () => {
    expect(files.filter((file) => unitOf(file) === undefined).map((file) => relative(src, file))).toEqual([]);
  });

  it('each unit imports only the units the table allows', () => {
    expect(forbiddenImports(graph, LAYERS)).toEqual([]);
  });

  it('api/ and console/ import nothing from storage/ (the wire vocabulary lives in core/)', () => {
    expect(LAYERS.api).not.toContain('storage');
    const storage = join(src, 'storage');
    const consoleFiles = consoleSources(join(root, 'console', 'src'));
    expect(consoleFiles.length).toBeGreaterThan(10);
    const leaks = consoleFiles.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(storage))
        .map((target) => `${relative(root, file)} → ${relative(root, target)}`),
    );
    expect(leaks).toEqual([]);
  });

  it('the table has no cycle between units', () => {
    expect(layerCycles(LAYERS)).toEqual([]);
  });

  it('src/limiter/ imports nothing from the rest of src/ (it is the standalone library)', () => {
    expect(LAYERS.limiter).toEqual([]);
    const limiter = join(src, 'limiter');
    const leaks = files
      .filter((file) => file.startsWith(limiter))
      .flatMap((file) => (graph.get(file) ?? []).filter((target) => !target.startsWith(limiter)));
    expect(leaks).toEqual([]);
  });

  it('the checks catch what they are for: a forbidden import and a cycle in the table', () => {
    const limiterFile = join(src, 'limiter', 'limiter.ts');
    const leak = new Map([[limiterFile, [join(src, 'limiter', 'types.ts'), join(src, 'storage', 'database.ts')]]]);
    expect(forbiddenImports(leak, LAYERS)).toEqual(['limiter → storage: limiter/limiter.ts → storage/database.ts']);
    const adapter = join(src, 'admission', 'adapters', 'blacklist-cache.ts');
    const core = join(src, 'admission', 'chain.ts');
    const backwards = new Map([[core, [adapter]]]);
    expect(forbiddenImports(backwards, LAYERS)).toHaveLength(1);
    expect(layerCycles({ ...LAYERS, core: ['services'] })).toContain('core');
  });

  it('every relative import resolves to a file', () => {
    // The scan sees the imports at all (a broken pattern would make the other checks pass vacuously).
    expect([...graph.values()].flat().length).toBeGreaterThan(100);
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((target) => !graph.has(target)).map((target) => `${relative(src, file)} → ${relative(src, target)}`),
    );
    expect(missing).toEqual([]);
  });

  it('has no import cycles between files', () => {
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

  it('the runtime stays in main/: every other unit receives narrow interfaces', () => {
    const runtime = join(src, 'main', 'runtime.ts');
    const main = join(src, 'main');
    const importers = [...graph].filter(([file, targets]) => !file.startsWith(main) && targets.includes(runtime));
    expect(importers.map(([file]) => relative(src, file))).toEqual([]);
  });

  it('the choice between Redis and in process is made in one module, main/backend/backend.ts', () => {
    const chooser = join(src, 'main', 'backend', 'backend.ts');
    const clientBuilder = join(src, 'infra', 'redis-client.ts');
    const settingsDir = join(src, 'settings');
    // The client builder and `sluice ban` take the kind decided there; they do not decide again.
    const readers = files.filter(
      (file) => file !== chooser && !file.startsWith(settingsDir) && /\.(redisUrl|redisClusterNodes)\b/.test(readFileSync(file, 'utf8')),
    );
    expect(readers.map((file) => relative(src, file))).toEqual([]);
    const builders = [...graph].filter(([, targets]) => targets.includes(clientBuilder)).map(([file]) => relative(src, file));
    // backend.ts names the target it decided (`RedisTarget`); redis.ts builds the client from it.
    expect(builders).toEqual([join('main', 'backend', 'backend.ts'), join('main', 'backend', 'redis.ts')]);
  });

  it('no backend member is tested for undefined to pick a mode: code narrows on `kind` (or the broker axis)', () => {
    // The type test (test/main/backend-modes.test.ts) holds that no member can be undefined; this
    // holds the callers to narrowing rather than probing a member (`backend.dueIndex ?`, `!backend.x`).
    const probe = /!\s*(?:runtime\.)?backend\.\w+|\bbackend\.(?!kind\b)\w+(?:\.(?!kind\b)\w+)*\s*(?:\?\?|\?\.|\?(?![?.=])|!(?!=))/;
    const probing = files.filter((file) => probe.test(readFileSync(file, 'utf8')));
    expect(probing.map((file) => relative(src, file))).toEqual([]);
    expect(probe.test('...(backend.dueIndex ? { dueIndex: backend.dueIndex } : {})')).toBe(true);
    expect(probe.test('if (!runtime.backend.memoryStore) return')).toBe(true);
    expect(probe.test("backend.kind === 'embedded' ? undefined : backend.dueIndex")).toBe(false);
    expect(probe.test("backend.broker.kind === 'jetstream' ? { broker: backend.broker.port } : {}")).toBe(false);
  });

  it('no source casts a client to a Redis or a Cluster: each part names the shape it uses', () => {
    const code = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(?:\*|\/\/|\/\*)/.test(line))
        .join('\n');
    const casts = files.filter((file) => /\bas (?:unknown as )?(?:Redis|Cluster)\b/.test(code(file)));
    expect(casts.map((file) => relative(src, file))).toEqual([]);
  });

  it('no source file is over 500 lines', () => {
    const long = files
      .map((file) => ({ file: relative(src, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 500);
    expect(long).toEqual([]);
  });
});
