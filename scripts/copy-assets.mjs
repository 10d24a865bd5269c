// tsc compiles TypeScript only: write the Lua scripts next to the compiled modules that load them,
// each joined with its `--- @include` pieces (src/limiter/stores/redis/lua-source.ts, compiled by
// the tsc step before this one), so dist/ ships one file per script and no pieces. Then marks the
// package's bin executable: tsc writes dist/cli/main.js afresh (after `npm pack`'s clean, for one)
// as 0644, and `npx sluice` in the checkout would then answer "Permission denied".
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isLuaInclude, joinLuaSource } from '../dist/limiter/stores/redis/lua-source.js';

function* luaFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* luaFiles(path);
    else if (entry.name.endsWith('.lua')) yield path;
  }
}

for (const file of luaFiles('src')) {
  if (isLuaInclude(file)) continue;
  const target = join('dist', relative('src', file));
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, joinLuaSource(file));
}

const { bin } = JSON.parse(readFileSync('package.json', 'utf8'));
for (const path of Object.values(bin)) chmodSync(path, 0o755);
