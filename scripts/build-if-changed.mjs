// `npm start`'s prestart: runs `npm run build` only when something the build reads changed since
// the last build this script ran (a stamp in dist/), so a start with the same sources serves in
// about a second instead of paying a 15 s build. A fresh clone has no stamp, and builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npm run build` reads: the sources, the console, the build scripts and their settings. */
export const BUILD_INPUTS = ['src', 'console', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** Written after a build that succeeded; its time is the build's. */
export const STAMP = join('dist', '.build-stamp');
/** What a start needs of dist/: without them, a build whatever the stamp says. */
const OUTPUTS = [join('dist', 'cli', 'main.js'), join('dist', 'console', 'index.html')];

/** The file or folder modified last under `path` (itself included), or undefined when it is missing. */
function newest(path) {
  if (!existsSync(path)) return undefined;
  const stats = statSync(path);
  // A folder's own time counts: a file removed changes its folder's time.
  let latest = { path, mtimeMs: stats.mtimeMs };
  if (!stats.isDirectory()) return latest;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    const found = newest(join(path, entry));
    if (found && found.mtimeMs > latest.mtimeMs) latest = found;
  }
  return latest;
}

/**
 * Why `root` needs a build, naming what was found (the missing stamp or output, the input newer than
 * the last build), or undefined when dist/ is as new as every input.
 */
export function buildReason(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return `no ${STAMP}: no build by npm start yet`;
  const missing = OUTPUTS.find((output) => !existsSync(join(root, output)));
  if (missing !== undefined) return `${missing} is missing`;
  const built = statSync(stamp).mtimeMs;
  for (const input of BUILD_INPUTS) {
    const found = newest(join(root, input));
    if (found && found.mtimeMs > built) return `${relative(root, found.path)} is newer than the last build`;
  }
  return undefined;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const reason = buildReason(root);
  if (reason === undefined) {
    console.error('sluice: dist/ is up to date (npm run build to build anyway)');
  } else {
    console.error(`sluice: building (${reason})…`);
    // The stamp carries the build's start: a source saved while it ran is newer, and builds next time.
    const started = new Date();
    const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (build.status !== 0) process.exit(build.status ?? 1);
    writeFileSync(join(root, STAMP), `${started.toISOString()}\n`);
    utimesSync(join(root, STAMP), started, started);
  }
}
