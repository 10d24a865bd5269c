/**
 * What the package tests share: a copy of the checkout to pack from, fresh projects that install
 * tarballs offline at the versions of package-lock.json, the README examples, and a record of the
 * packages a process loads.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const root = fileURLToPath(new URL('../../', import.meta.url));
export const tsxLoader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;
export const tsc = join(root, 'node_modules/typescript/bin/tsc');

type Manifest = Record<string, unknown> & { name: string; version: string; dependencies?: Record<string, string> };
interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export const readJson = <T = Manifest>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

/** The first ```ts block after `heading` in `markdown`. */
export function markdownExample(markdown: string, heading: string): string {
  const at = markdown.indexOf(heading);
  const code = at < 0 ? undefined : /```ts\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!code) throw new Error(`no ts example under ${heading}`);
  return code;
}

/**
 * Copies the checkout's files (committed or not, as git lists them) into `copy`, its node_modules a
 * link to the checkout's: a pack deletes and rebuilds dist/ there, never in the working tree.
 */
export async function copyCheckout(copy: string): Promise<void> {
  const { stdout: listed } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 16 << 20,
  });
  for (const file of listed.split('\0')) {
    // A file deleted but not yet committed is still in the index.
    if (file === '' || !existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(root, file), join(copy, file));
  }
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
}

/** What a fresh project installs: packed tarballs by package folder, and packages of package-lock.json by name. */
export interface ProjectDependencies {
  /** A tarball, and the folder of the checkout (or its copy) it was packed from (for its manifest). */
  tarballs: { tarball: string; folder: string }[];
  /** Further dependencies, at the version package-lock.json installs. */
  registry?: string[];
  devRegistry?: string[];
}

/**
 * A project in `dir` that depends on the tarballs (and the named packages), locked to the versions
 * this checkout tested: its package-lock.json holds the tarballs and the closure of their
 * dependencies as the checkout's package-lock.json resolves them, so `npm ci --offline` installs it
 * from npm's cache. An existing package.json (`npm init -y`) keeps its other fields.
 */
export function writeProject(dir: string, wanted: ProjectDependencies): void {
  const lock = readJson<{ packages: Record<string, LockEntry> }>(join(root, 'package-lock.json')).packages;
  const packages: Record<string, unknown> = {};
  const dependencies: Record<string, string> = {};
  const devDependencies: Record<string, string> = {};
  const queue: { path: string; entry: LockEntry; dev: boolean }[] = [];
  for (const { tarball, folder } of wanted.tarballs) {
    const manifest = readJson(join(folder, 'package.json'));
    const spec = `file:${tarball}`;
    dependencies[manifest.name] = spec;
    const entry: LockEntry & Record<string, unknown> = { version: manifest.version, resolved: spec };
    for (const field of ['license', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines'])
      if (manifest[field] !== undefined) entry[field] = manifest[field];
    packages[`node_modules/${manifest.name}`] = entry;
    queue.push({ path: `node_modules/${manifest.name}`, entry, dev: false });
  }
  const fromLock = (name: string, dev: boolean) => {
    const path = `node_modules/${name}`;
    const entry = lock[path];
    if (!entry?.version) throw new Error(`${name} is not in package-lock.json`);
    (dev ? devDependencies : dependencies)[name] = entry.version;
    queue.push({ path, entry, dev });
  };
  for (const name of wanted.registry ?? []) fromLock(name, false);
  for (const name of wanted.devRegistry ?? []) fromLock(name, true);
  // Node's resolution over the lock's paths: node_modules/a/node_modules/b, then up to node_modules/b.
  const resolve = (from: string, name: string): string | undefined => {
    for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
      const path = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`;
      if (packages[path] !== undefined || lock[path] !== undefined) return path;
      if (base === '') return undefined;
    }
  };
  const devOnly = new Set<string>();
  const reached = new Set<string>();
  // Production first, to the end, so that a package both reach is not marked dev.
  const walk = (dev: boolean) => {
    const pending = queue.filter((item) => item.dev === dev);
    while (pending.length > 0) {
      const { path, entry } = pending.shift()!;
      if (reached.has(path)) continue;
      reached.add(path);
      if (dev) devOnly.add(path);
      if (packages[path] === undefined) {
        const { dev: _dev, devOptional: _devOptional, ...kept } = entry;
        packages[path] = kept;
      }
      const optionalPeers = entry.peerDependenciesMeta ?? {};
      const needs = [
        ...Object.keys(entry.dependencies ?? {}),
        ...Object.keys(entry.optionalDependencies ?? {}),
        ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers[name]?.optional),
      ];
      for (const name of needs) {
        const found = resolve(path, name);
        // An optional dependency for another platform is absent from the lock.
        if (found !== undefined) pending.push({ path: found, entry: (packages[found] as LockEntry | undefined) ?? lock[found]!, dev });
      }
    }
  };
  walk(false);
  walk(true);
  for (const path of devOnly) (packages[path] as LockEntry).dev = true;
  const manifestPath = join(dir, 'package.json');
  const existing = existsSync(manifestPath)
    ? readJson<Record<string, unknown>>(manifestPath)
    : { name: 'sluice-user', private: true, type: 'module' };
  const name = (existing.name as string | undefined) ?? 'sluice-user';
  writeFileSync(manifestPath, JSON.stringify({ ...existing, dependencies, devDependencies }, null, 2));
  packages[''] = { name, dependencies, devDependencies };
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name, lockfileVersion: 3, requires: true, packages }, null, 2));
}

/** `npm ci` from npm's cache, without install scripts; its warnings and how long it took. */
export async function installOffline(dir: string): Promise<{ warnings: string; ms: number }> {
  const started = performance.now();
  const { stderr } = await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=warn'], {
    cwd: dir,
    timeout: 120_000,
  });
  return { warnings: stderr, ms: Math.round(performance.now() - started) };
}

/** Every package installed under `dir`/node_modules, nested ones included, by name. */
export function installedPackages(dir: string): string[] {
  const names = new Set<string>();
  const walk = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      if (entry.startsWith('.')) continue;
      const folders = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((scoped) => `${entry}/${scoped}`) : [entry];
      for (const name of folders) {
        names.add(name);
        walk(join(modules, name, 'node_modules'));
      }
    }
  };
  walk(join(dir, 'node_modules'));
  return [...names].sort();
}

/** Records the URL of every module a process loads into `log` (a resolve hook, registered by `--import`). */
export function importRecorder(dir: string, log: string): string {
  const hooks = join(dir, 'record-hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + '\\n');\n  return result;\n}\n`,
  );
  const register = join(dir, 'record.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  return register;
}

/**
 * The package folders a process loaded from `project`'s node_modules, from a recorder's log:
 * `sluice/dist/client`, `@sluice/limiter`, `cluster-key-slot`… (a loader's own modules, such as tsx's
 * from the checkout, are not the project's).
 */
export function loadedPackages(log: string, project: string): string[] {
  const folders = new Set<string>();
  const modules = `${pathToFileURL(join(project, 'node_modules')).href}/`;
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    if (!url.startsWith(modules)) continue;
    const inModules = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
    if (!inModules) continue;
    const [, name, rest] = inModules;
    folders.add(name === 'sluice' ? `sluice/${rest!.split('/').slice(0, 2).join('/')}` : name!);
  }
  return [...folders].sort();
}
