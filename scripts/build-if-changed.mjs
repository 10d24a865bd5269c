// `npm start`'s prestart: runs `npm run build` only when something the build reads changed since
// the last build this script ran (a stamp in dist/), so a start with the same sources serves in
// about a second instead of paying a 15 s build. A fresh clone has no stamp, and builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npm run build` reads: the sources, the console, the build scripts and their settings. */
export const BUILD_INPUTS = ['src', 'console', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** Written after a build that succeeded; its time is the build's. */
export const STAMP = join('dist', '.build-stamp');
/** What a start needs of dist/: without them, a build whatever the stamp says. */
const OUTPUTS = [join('dist', 'cli', 'main.js'), join('dist', 'console', 'index.html')];

/** The latest modification time under `path` (a file or a folder, recursively); 0 when it is missing. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs; // a file removed changes its folder's time
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules') continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

/** Why `root` needs a build, or undefined when dist/ is as new as every input. */
export function buildReason(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp)) return 'no build yet';
  if (OUTPUTS.some((output) => !existsSync(join(root, output)))) return 'dist/ is incomplete';
  const built = statSync(stamp).mtimeMs;
  const changed = BUILD_INPUTS.find((input) => newest(join(root, input)) > built);
  return changed === undefined ? undefined : `${changed} changed since the last build`;
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
