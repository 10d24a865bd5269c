/**
 * Finds Prometheus' `promtool` (env PROMTOOL, else on PATH) for the checks of the exposition and
 * the alert rules. Without it those suites skip loudly; with CI=true they fail, so CI cannot pass
 * by skipping. How to get the binary without a server: docs/metrics.md.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe } from 'vitest';

function findPromtool(): string | undefined {
  if (process.env.PROMTOOL) return process.env.PROMTOOL;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'promtool');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export const promtool = findPromtool();

/** `describe` when promtool exists; otherwise skipped with a warning, or a failure in CI. */
export function describeWithPromtool(name: string, body: () => void): void {
  if (promtool) {
    describe(name, body);
    return;
  }
  if (process.env.CI === 'true') {
    throw new Error(`promtool not found (set PROMTOOL or put it on PATH): CI must run "${name}". See docs/metrics.md`);
  }
  console.warn(`\n*** SKIPPING "${name}": promtool not found (set PROMTOOL; see docs/metrics.md) ***\n`);
  describe.skip(name, body);
}

/** Runs promtool with `args`, feeding `input` on stdin. */
export function runPromtool(args: string[], input?: string): { status: number | null; output: string } {
  const result = spawnSync(promtool!, args, { input, encoding: 'utf8', timeout: 15_000 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
