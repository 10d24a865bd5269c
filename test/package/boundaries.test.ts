/**
 * What each workspace package compiles, and that it reaches nothing of the server
 * (docs/architecture.md, "Packages"): packages/limiter builds src/limiter/ alone, whose modules
 * import only each other, node: built-ins and the package's dependencies; packages/client ships
 * src/client/'s modules, which load only each other and name the API's wire types in type-only
 * imports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJson, root } from './support.js';

const src = join(root, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

interface Import {
  from: string;
  specifier: string;
  typeOnly: boolean;
}

/** Every import of a module: static `import`/`export … from` (type-only ones marked) and `import('…')`. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(root, file);
  return [
    ...[...text.matchAll(/^(import|export)(\s+type)?\s[^;]*?from\s+'([^']+)'/gms)].map((match) => ({
      from,
      specifier: match[3]!,
      typeOnly: match[2] !== undefined,
    })),
    ...[...text.matchAll(/^(?:import\s+'([^']+)'|.*\bimport\('([^']+)'\))/gm)].map((match) => ({
      from,
      specifier: (match[1] ?? match[2])!,
      typeOnly: false,
    })),
  ];
}

const isBuiltin = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);
const target = (anImport: Import) => relative(src, resolve(dirname(join(root, anImport.from)), anImport.specifier));
const describeImport = (anImport: Import) => `${anImport.from} → ${anImport.specifier}`;
/** The relative imports that leave `folder` (of src/). */
const leaving = (imports: Import[], folder: string) =>
  imports.filter((anImport) => anImport.specifier.startsWith('.') && !target(anImport).startsWith(`${folder}/`)).map(describeImport);

describe('the workspace packages compile their own folder of src/ and reach nothing of the server', () => {
  it('packages/limiter compiles src/limiter/, whose modules import only each other, node: built-ins and its dependencies', () => {
    const manifest = readJson(join(root, 'packages/limiter/package.json'));
    const tsconfig = readJson<{ include: string[]; compilerOptions: { rootDir: string } }>(join(root, 'packages/limiter/tsconfig.json'));
    expect(tsconfig.include).toEqual(['../../src/limiter']);
    expect(tsconfig.compilerOptions.rootDir).toBe('../../src/limiter');
    const imports = sourceFiles(join(src, 'limiter')).flatMap(importsOf);
    expect(leaving(imports, 'limiter')).toEqual([]);
    const packages = new Set(imports.filter((i) => !i.specifier.startsWith('.') && !isBuiltin(i.specifier)).map((i) => i.specifier));
    // Exactly its dependencies: none missing from package.json, none declared and unused.
    expect([...packages].sort()).toEqual(Object.keys(manifest.dependencies ?? {}).sort());
  });

  it('src/client/ loads only its own modules; the wire types of api/ and core/ and TypeBox only in type-only imports', () => {
    const manifest = readJson(join(root, 'packages/client/package.json'));
    const imports = sourceFiles(join(src, 'client')).flatMap(importsOf);
    const loaded = imports.filter((anImport) => !anImport.typeOnly);
    expect(loaded.filter((i) => !i.specifier.startsWith('.')).map(describeImport)).toEqual([]);
    expect(leaving(loaded, 'client')).toEqual([]);
    const typeTargets = imports.filter((i) => i.typeOnly && i.specifier.startsWith('.') && !target(i).startsWith('client/'));
    expect(typeTargets.filter((i) => !/^(api|core)\//.test(target(i))).map(describeImport)).toEqual([]);
    const packages = new Set(imports.filter((i) => !i.specifier.startsWith('.')).map((i) => i.specifier));
    expect([...packages].sort()).toEqual(Object.keys(manifest.dependencies ?? {}).sort());
  });

  it('the checks catch what they are for: an import out of src/limiter/, and a type import is told from a value import', () => {
    const from = 'src/limiter/limiter.ts';
    const imports: Import[] = [
      { from, specifier: './types.js', typeOnly: false },
      { from, specifier: '../storage/database.js', typeOnly: true },
    ];
    expect(leaving(imports, 'limiter')).toEqual(['src/limiter/limiter.ts → ../storage/database.js']);
    const client = importsOf(join(src, 'client/index.ts'));
    expect(client.some((i) => i.typeOnly && target(i).startsWith('api/'))).toBe(true);
    expect(client.some((i) => !i.typeOnly && target(i) === 'client/tenant-config.js')).toBe(true);
  });

  it('sluice depends on both packages at their version, and `sluice/limiter` and `sluice/client` re-export them', () => {
    const manifest = readJson<{ version: string; dependencies: Record<string, string>; workspaces: string[] }>(join(root, 'package.json'));
    expect(manifest.workspaces).toEqual(['packages/limiter', 'packages/client']);
    for (const name of ['limiter', 'client']) {
      expect(readJson(join(root, 'packages', name, 'package.json')).version).toBe(manifest.version);
      expect(manifest.dependencies[`@sluice/${name}`]).toBe(manifest.version);
      for (const file of [`reexports/${name}.js`, `reexports/${name}.d.ts`])
        expect(readFileSync(join(root, file), 'utf8')).toContain(`export * from '@sluice/${name}';`);
    }
  });
});
