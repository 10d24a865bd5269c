// Copies the production dependencies of the checkout ROOT, as installed there, into APP/node_modules:
// every package-lock.json entry not marked dev, each top-level folder with whatever it nests. What an
// `npm ci --omit=dev` would lay out, without fetching or building anything a second time.
// Usage: node scripts/container/copy-production-modules.mjs ROOT APP
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [root, app] = process.argv.slice(2);
if (!root || !app) throw new Error('usage: copy-production-modules.mjs ROOT APP');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
let copied = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  // "" is the root package; nested paths come along with their top-level folder.
  // A link is a workspace package (packages/*): build.sh installs it from its tarball.
  if (path === '' || entry.dev || entry.link || path.lastIndexOf('node_modules/') !== 0) continue;
  const from = join(root, path);
  if (!existsSync(from)) {
    // An optional dependency (a platform's build of something) may be absent; anything else must be there.
    if (entry.optional) continue;
    throw new Error(`${path} is in package-lock.json but not installed: run npm ci first`);
  }
  cpSync(from, join(app, path), { recursive: true, verbatimSymlinks: true });
  copied++;
}
console.error(`copied ${copied} production packages into ${join(app, 'node_modules')}`);
