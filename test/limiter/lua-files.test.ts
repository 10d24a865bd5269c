/**
 * The Lua sources of src/ (docs/limiter.md, "Lua scripts"): each file short and headed by its
 * contract. A script (one atomic operation, one EVALSHA) names its KEYS, ARGV and reply; a piece
 * under `includes/` says what it defines and what it expects in scope, and a piece spliced into a
 * script's code as a block (`name (a block of …`) is included from one place only, since a second
 * `@include` of a piece is dropped when joining.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isLuaInclude, joinLuaSource, luaIncludes } from '../../src/limiter/stores/redis/lua-source.js';

/**
 * Most lines of a .lua file, its header included: a script with its contract on about three
 * screens. The largest script was 680 lines with a 337-line loop; the pieces now run to 90.
 */
const MAX_LINES = 200;

const src = fileURLToPath(new URL('../../src/', import.meta.url));

function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return luaFiles(path);
    return entry.name.endsWith('.lua') ? [path] : [];
  });
}

/** The leading `--[[ … ]]` comment of a Lua text, or '' when it has none. */
function header(text: string): string {
  return /^--\[\[\n([\s\S]*?)\n\]\]/.exec(text)?.[1] ?? '';
}

const files = luaFiles(src).map((path) => ({ path, name: relative(src, path), text: readFileSync(path, 'utf8') }));
const scripts = files.filter((file) => !isLuaInclude(file.name));
const pieces = files.filter((file) => isLuaInclude(file.name));

/** Every `@include` line of every file, resolved to the piece it names. */
const includeLines = files.flatMap((file) => luaIncludes(file.text).map((name) => resolve(dirname(file.path), `${name}.lua`)));

describe('Lua sources', () => {
  it('are found, scripts and pieces both', () => {
    expect(scripts.length).toBeGreaterThan(10);
    expect(pieces.length).toBeGreaterThan(10);
  });

  it(`no .lua file is over ${MAX_LINES} lines`, () => {
    const long = files.map((file) => ({ file: file.name, lines: file.text.split('\n').length })).filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('every script opens with a header naming its KEYS, its ARGV and what it returns', () => {
    const missing = scripts.flatMap((file) => {
      const text = header(file.text);
      return ['KEYS', 'ARGV', 'Returns'].filter((word) => !text.includes(word)).map((word) => `${file.name}: ${word}`);
    });
    expect(missing).toEqual([]);
  });

  it('every piece opens with a header saying what it defines and what it expects in scope', () => {
    const missing = pieces.flatMap((file) => {
      const text = header(file.text);
      return ['Defines:', 'Expects:'].filter((word) => !new RegExp(`^${word}`, 'm').test(text)).map((word) => `${file.name}: ${word}`);
    });
    expect(missing).toEqual([]);
  });

  it('every script joins: each include found, none left in the joined text', () => {
    for (const file of scripts) expect(luaIncludes(joinLuaSource(file.path)), file.name).toEqual([]);
  });

  it('every piece is included somewhere, and a block piece from one place only', () => {
    const uses = (piece: string) => includeLines.filter((path) => path === piece).length;
    expect(pieces.filter((file) => uses(file.path) === 0).map((file) => file.name)).toEqual([]);
    const blocks = pieces.filter((file) => /^\S+ \(a block of /.test(header(file.text)));
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.filter((file) => uses(file.path) !== 1).map((file) => file.name)).toEqual([]);
  });
});
