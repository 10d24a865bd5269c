// The step after a workspace package's tsc (packages/*/package.json, "build"), run in its folder:
// - keeps in dist/ only what the package's exports reach: the modules their `.js` files import and
//   the declarations their `.d.ts` files import (packages/client compiles src/client, and tsc then
//   emits every server module the API's wire types name; the client ships their declarations alone);
// - with --lua, writes the Lua scripts of the compiled folder next to the modules that load them,
//   each joined with its `--- @include` pieces, as scripts/copy-assets.mjs does for the server;
// - copies the repository's LICENSE into the package folder, which `npm pack` then ships.
// The sources stay in src/ (docs/architecture.md, "Packages").
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const here = process.cwd();
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const { compilerOptions } = JSON.parse(readFileSync('tsconfig.json', 'utf8'));
const rootDir = resolve(compilerOptions.rootDir);
const outDir = resolve(compilerOptions.outDir);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

// The closure of the exports' entry files over relative imports (`from './x.js'`, `import('./x.js')`).
const kept = new Set();
const reach = (file) => {
  if (kept.has(file)) return;
  kept.add(file);
  const text = readFileSync(file, 'utf8');
  for (const [, specifier] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
    const target = resolve(dirname(file), specifier);
    reach(file.endsWith('.d.ts') ? target.replace(/\.js$/, '.d.ts') : target);
  }
};
for (const entry of Object.values(manifest.exports)) for (const path of Object.values(entry)) reach(resolve(path));
let removed = 0;
for (const file of [...files(outDir)]) {
  if (kept.has(file)) continue;
  rmSync(file);
  removed++;
}
// Folders left empty by the pruning.
const prune = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) prune(join(dir, entry.name));
  if (dir !== outDir && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
};
prune(outDir);

if (process.argv.includes('--lua')) {
  const source = resolve(outDir, relative(rootDir, resolve('../../src/limiter/stores/redis/lua-source.js')));
  const { isLuaInclude, joinLuaSource } = await import(pathToFileURL(source).href);
  for (const file of files(rootDir)) {
    if (!file.endsWith('.lua') || isLuaInclude(relative(rootDir, file))) continue;
    const target = join(outDir, relative(rootDir, file));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, joinLuaSource(file));
  }
}

copyFileSync(resolve('../../LICENSE'), join(here, 'LICENSE'));
console.error(`${manifest.name}: ${kept.size} files in ${relative(here, outDir)}/ (${removed} not reached removed)`);
