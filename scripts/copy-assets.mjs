// tsc compiles TypeScript only: copy the Lua scripts next to the compiled modules that load them.
import { cpSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

function* luaFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* luaFiles(path);
    else if (entry.name.endsWith('.lua')) yield path;
  }
}

for (const file of luaFiles('src')) cpSync(file, join('dist', relative('src', file)));
