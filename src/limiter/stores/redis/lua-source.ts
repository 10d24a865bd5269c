/**
 * The text of a Lua script made of pieces, as BullMQ joins its commands: a line
 * `--- @include "includes/name"` is replaced by the text of `includes/name.lua` (the path relative
 * to the file holding the line), itself joined the same way. Each piece is included once per script:
 * a later line naming a piece already included is dropped, so pieces that define shared functions
 * can each include what they use. One operation thus stays one script, one EVALSHA, whatever the
 * number of its source files.
 *
 * A piece is a `.lua` file under a folder named `includes`: never a script of its own.
 * `npm run build` (scripts/copy-assets.mjs) writes every script joined into `dist/` and ships no
 * piece; `LuaScript.fromFile` joins at load time too, so a script read from `src/` (tests, `tsx`) is
 * the same text, and a joined one passes through unchanged.
 *
 * No imports but node:fs and node:path, and no side effects: the build imports it from `dist/`.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** An include line; a new RegExp per use, as joining recurses inside a replace. */
const includeLine = () => /^[ \t]*--- @include "([^"]+)"[ \t]*$/gm;

/** A Lua file under an `includes` folder (of `path` as given, e.g. relative to src/): a piece of scripts, not a script. */
export function isLuaInclude(path: string): boolean {
  return path.split(/[/\\]/).slice(0, -1).includes('includes');
}

/**
 * The script in `file` with its includes joined (recursively, each once).
 * @throws Error naming the file and the line when an include is missing.
 */
export function joinLuaSource(file: string): string {
  const included = new Set<string>();
  const join1 = (path: string, text: string): string =>
    text.replace(includeLine(), (_line, name: string) => {
      const piece = resolve(dirname(path), `${name}.lua`);
      if (included.has(piece)) return '';
      included.add(piece);
      let source: string;
      try {
        source = readFileSync(piece, 'utf8');
      } catch {
        throw new Error(`Lua include "${name}" of ${path} not found at ${piece}`);
      }
      return join1(piece, source.replace(/\n$/, ''));
    });
  const path = resolve(file);
  included.add(path);
  return join1(path, readFileSync(path, 'utf8'));
}

/** The `@include` names a Lua text asks for, in order (for checks of the pieces). */
export function luaIncludes(text: string): string[] {
  return [...text.matchAll(includeLine())].map((match) => match[1]!);
}
