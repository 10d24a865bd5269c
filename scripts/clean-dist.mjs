// Before a pack: an empty dist/, so that no module compiled from a source since removed is shipped.
// `node scripts/clean-dist.mjs` cleans the repository's dist/; `node ../../scripts/clean-dist.mjs .`,
// run in a workspace package's folder, that package's.
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';

const folder = process.argv[2];
rmSync(folder === undefined ? new URL('../dist', import.meta.url) : resolve(folder, 'dist'), { recursive: true, force: true });
