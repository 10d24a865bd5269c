/**
 * `npm start`'s prestart builds only when an input of the build changed since the last build
 * (scripts/build-if-changed.mjs): a start with the same sources skips the 15 s build.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations.
import { BUILD_INPUTS, buildReason, STAMP } from '../../scripts/build-if-changed.mjs';

const touch = (path: string, seconds: number) => {
  writeFileSync(path, '');
  utimesSync(path, seconds, seconds);
};

it('builds a clone without a build, skips one whose inputs are older than the stamp, and builds after any input changed', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-build-'));
  for (const folder of ['src/cli', 'console', 'scripts', 'dist/cli', 'dist/console', 'node_modules/x'])
    mkdirSync(join(root, folder), { recursive: true });
  for (const file of ['src/cli/main.ts', 'console/index.html', 'scripts/copy-assets.mjs', 'package.json', 'tsconfig.json'])
    touch(join(root, file), 1000);
  for (const folder of ['src', 'src/cli', 'console', 'scripts']) utimesSync(join(root, folder), 1000, 1000);
  expect(buildReason(root)).toBe('no dist/.build-stamp: no build by npm start yet');

  for (const file of ['dist/cli/main.js', STAMP]) touch(join(root, file), 2000);
  expect(buildReason(root)).toBe('dist/console/index.html is missing');
  touch(join(root, 'dist/console/index.html'), 2000);
  expect(buildReason(root)).toBeUndefined();
  // node_modules is not an input.
  touch(join(root, 'node_modules/x/index.js'), 3000);
  expect(buildReason(root)).toBeUndefined();

  touch(join(root, 'src/cli/main.ts'), 3000);
  // The message names the file found, not only its top folder.
  expect(buildReason(root)).toBe('src/cli/main.ts is newer than the last build');
  touch(join(root, 'src/cli/main.ts'), 1000);
  touch(join(root, 'package-lock.json'), 3000);
  expect(buildReason(root)).toBe('package-lock.json is newer than the last build');
  touch(join(root, 'package-lock.json'), 1000);
  expect(buildReason(root)).toBeUndefined();
  // A file removed shows as its folder, changed.
  utimesSync(join(root, 'console'), 3000, 3000);
  expect(buildReason(root)).toBe('console is newer than the last build');
  utimesSync(join(root, 'console'), 1000, 1000);
  expect(buildReason(root)).toBeUndefined();
  expect(BUILD_INPUTS).toEqual(expect.arrayContaining(['src', 'console', 'scripts', 'package.json']));
});
