// Before a pack: an empty dist/, so that no module compiled from a source since removed is shipped.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
