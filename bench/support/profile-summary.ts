/**
 * `npx tsx bench/support/profile-summary.ts <file.cpuprofile> [top] [from-s] [to-s]`: a
 * `--cpu-prof` profile's self time by module (a package under node_modules, a file of src/, or
 * Node's internals) and by function, in percent of the busy (not idle) time, so a flat profile can
 * be read as where the time goes. `from-s`/`to-s` keep the samples of that span (seconds since the
 * profile started): the load, without the start-up's compiling.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The module a frame belongs to: `pkg` for node_modules, `src/...` for ours, else what V8 calls it. */
function moduleOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1]!;
  const source = /\/(src\/.*)$/.exec(url);
  if (source) return source[1]!;
  if (url.startsWith('node:')) return 'node:internals';
  return url;
}

function summarise(file: string, top: number, fromSeconds: number, toSeconds: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const idle = new Set(profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id));
  const selfById = new Map<number, number>();
  let at = 0;
  let idleMicros = 0;
  for (const [index, id] of profile.samples.entries()) {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at < fromSeconds * 1e6 || at > toSeconds * 1e6) continue;
    if (idle.has(id)) idleMicros += delta;
    else selfById.set(id, (selfById.get(id) ?? 0) + delta);
  }
  const total = [...selfById.values()].reduce((sum, value) => sum + value, 0);
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const self = selfById.get(node.id) ?? 0;
    if (self === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const module = moduleOf(url, functionName);
    byModule.set(module, (byModule.get(module) ?? 0) + self);
    const key = `${functionName || '(anonymous)'} ${module}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + self);
  }
  const list = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => `${((micros / total) * 100).toFixed(1).padStart(5)} %  ${name}`)
      .join('\n');
  return `${file}: ${(total / 1e6).toFixed(1)} s busy, ${(idleMicros / 1e6).toFixed(1)} s idle (percentages of busy)\n\nby module\n${list(byModule)}\n\nby function\n${list(byFunction)}\n`;
}

const [file, top, from, to] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top] [from-s] [to-s]');
process.stdout.write(summarise(file, Number(top ?? 30), Number(from ?? 0), Number(to ?? Number.POSITIVE_INFINITY)));
