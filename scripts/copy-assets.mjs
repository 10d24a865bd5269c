// tsc compiles TypeScript only: write the Lua scripts next to the compiled modules that load them,
// each joined with its `--- @include` pieces (src/limiter/stores/redis/lua-source.ts, compiled by
// the tsc step before this one), so dist/ ships one file per script and no pieces.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
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
