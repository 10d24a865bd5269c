/**
 * The package as others install it, and the container's two steps, run for real with one build:
 *
 * - the checkout's files (committed or not, as git lists them) are copied to a temporary folder, its
 *   node_modules a link to the checkout's: the pack deletes and rebuilds dist/ there, never in the
 *   working tree, whose dist/ and build stamp a later `npm start` reads;
 * - scripts/container/build.sh packs sluice and the workspace packages @sluice/limiter and
 *   @sluice/client (`npm pack`, whose prepacks build each dist/) and lays out the container's app
 *   directory from the tarballs;
 * - the three tarballs are installed into a fresh project (`npm ci --offline` from npm's cache, at the
 *   versions of package-lock.json; `--ignore-scripts`: the one install script, better-sqlite3's
 *   native build, serves the server, which the app directory runs);
 * - there the README's limiter and client examples run as `.mjs` and, through tsx, as `.ts`, and
 *   type-check against the installed declarations; a loader hook records every module the `.mjs`
 *   runs load, so the test sees that `@sluice/client` loads none of the server's dependencies, and
 *   `sluice/limiter` and `sluice/client` are the workspace packages re-exported;
 * - scripts/container/entrypoint.sh starts the app directory (`serve --demo`, SQLite) and the
 *   client example sends it a message, which its console provider prints.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinLuaSource } from '../../src/limiter/stores/redis/lua-source.js';
import { freePort } from '../support/net.js';
import {
  copyCheckout,
  importRecorder,
  installOffline,
  loadedPackages,
  markdownExample,
  readJson,
  root,
  run,
  tsc,
  tsxLoader,
  writeProject,
} from './support.js';

const { version } = readJson(join(root, 'package.json'));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** A project that depends on the three tarballs alone, type-checked as NodeNext and strict. */
function writeSluiceProject(dir: string, copy: string, out: string): void {
  writeProject(dir, {
    tarballs: [
      { tarball: join(out, `sluice-${version}.tgz`), folder: copy },
      { tarball: join(out, `sluice-limiter-${version}.tgz`), folder: join(copy, 'packages/limiter') },
      { tarball: join(out, `sluice-client-${version}.tgz`), folder: join(copy, 'packages/client') },
    ],
  });
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(root, 'node_modules/@types')],
      },
      include: ['*.ts'],
    }),
  );
}

describe('the packed package and the container scripts', { timeout: 120_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-package-'));
  const out = join(work, 'out');
  const project = join(work, 'project');
  const data = join(work, 'data');
  const copy = join(work, 'checkout');
  const distBefore = existsSync(join(root, 'dist')) ? statSync(join(root, 'dist')).mtimeMs : undefined;
  const tarball = join(out, `sluice-${version}.tgz`);
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let apiKey = '';
  let baseUrl = '';

  const waitForOutput = async (pattern: RegExp, what: string) => {
    for (let i = 0; i < 600 && !pattern.test(serverOutput); i++) {
      if (server && server.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const match = pattern.exec(serverOutput);
    if (!match) throw new Error(`${what}: not seen in the server's output:\n${serverOutput}`);
    return match;
  };

  const startServer = async () => {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', SLUICE_PORT: String(port), SLUICE_HOST: '127.0.0.1' };
    server = spawn(join(out, 'app/entrypoint.sh'), ['serve', '--demo'], { cwd: data, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
    const [, url, key] = await waitForOutput(
      /curl -si (http:\/\/\S+)\/v1\/messages -H 'Authorization: Bearer (sk_[\w-]+)'/,
      'the demo key',
    );
    baseUrl = url!;
    apiKey = key!;
  };

  let installWarnings = '';
  const install = async () => {
    installWarnings = (await installOffline(project)).warnings;
  };

  beforeAll(async () => {
    for (const dir of [out, project, data, copy]) mkdirSync(dir);
    await copyCheckout(copy);
    await run('bash', [join(copy, 'scripts/container/build.sh'), out], { cwd: copy, timeout: 240_000, maxBuffer: 64 << 20 }).catch(
      (error: { stderr?: string }) => {
        throw new Error(`scripts/container/build.sh failed:\n${error.stderr ?? String(error)}`);
      },
    );
    writeSluiceProject(project, copy, out);
    await Promise.all([install(), startServer()]);
    // The README's examples as a user would paste them; the client's pointed at the demo server.
    const limiter = markdownExample(readme, '## The limiter as a library');
    const client = markdownExample(readme, '## The typed client');
    expect(client).toContain("'http://127.0.0.1:3000'");
    const pointed = client.replace("'http://127.0.0.1:3000'", JSON.stringify(baseUrl));
    for (const extension of ['mjs', 'ts']) {
      writeFileSync(join(project, `limiter.${extension}`), limiter);
      writeFileSync(join(project, `client.${extension}`), pointed);
    }
  }, 600_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('the tarball holds the build, the re-exports, the license and the changelog; no sources, tests, benchmarks, source maps or client build', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout
      .trim()
      .split('\n')
      .map((path) => path.replace(/^package\//, ''));
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/limiter/index.js',
      'dist/limiter/index.d.ts',
      'dist/limiter/stores/redis/scripts/check-batch.lua',
      'reexports/limiter.js',
      'reexports/limiter.d.ts',
      'reexports/client.js',
      'reexports/client.d.ts',
      'dist/cli/main.js',
      'dist/console/index.html',
    ])
      expect(files, file).toContain(file);
    expect(files.filter((path) => !/^(dist\/|reexports\/|package\.json$|README\.md$|LICENSE$|CHANGELOG\.md$)/.test(path))).toEqual([]);
    // The server does not load the client: `sluice/client` is @sluice/client.
    expect(files.filter((path) => path.startsWith('dist/client/'))).toEqual([]);
    expect(files.filter((path) => path.endsWith('.map'))).toEqual([]);
  });

  it('the installed Lua scripts are joined with their pieces (the text the loader joins from src/), and no piece is shipped', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    expect(stdout.split('\n').filter((path) => path.includes('/includes/'))).toEqual([]);
    for (const script of ['limiter/stores/redis/scripts/check-batch.lua', 'limiter/events/scripts/risk-batch.lua']) {
      const installed = readFileSync(join(project, 'node_modules/sluice/dist', script), 'utf8');
      expect(installed, script).not.toContain('@include');
      expect(installed, script).toBe(joinLuaSource(join(root, 'src', script)));
    }
  });

  it("packs from a copy: the working tree's dist/ is as it was", () => {
    const distAfter = existsSync(join(root, 'dist')) ? statSync(join(root, 'dist')).mtimeMs : undefined;
    expect(distAfter).toBe(distBefore);
  });

  it('the build leaves the bin executable: the rebuilt dist/cli/main.js runs as `npx sluice` runs it', async () => {
    // The pack's prepack deleted dist/ and built it again; the bin is run as a file, not through node.
    const bin = join(copy, 'dist/cli/main.js');
    accessSync(bin, constants.X_OK);
    const { stdout } = await run(bin, ['--version'], { cwd: copy });
    expect(stdout).toBe(`${version}\n`);
  });

  it('`npm start` hands a SIGTERM on: the server it started drains and exits with it', async () => {
    // The copy's dist/ is the pack's build: stamped, so the prestart finds it up to date.
    writeFileSync(join(copy, 'dist/.build-stamp'), `${new Date().toISOString()}\n`);
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, SLUICE_PORT: String(port), SLUICE_HOST: '127.0.0.1' };
    for (const key of Object.keys(env)) if (key.startsWith('SLUICE_') && key !== 'SLUICE_PORT' && key !== 'SLUICE_HOST') delete env[key];
    // A process group of its own, so that a server left behind can be found and stopped.
    const npm = spawn('npm', ['start', '--', '--demo'], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // 'close' comes once every process holding npm's pipes has exited: the server's node included.
    const closed = once(npm, 'close');
    for (let i = 0; i < 600 && !output.includes('curl -si') && npm.exitCode === null; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(output).toContain('dist/ is up to date');
    expect(output).toContain('curl -si');
    npm.kill('SIGTERM');
    const outcome = await Promise.race([
      closed.then(() => 'closed'),
      new Promise((resolve) => setTimeout(resolve, 30_000, 'still serving')),
    ]);
    // Before: npm and its shell exited, the server kept serving; it is in npm's process group.
    if (outcome !== 'closed') process.kill(-npm.pid!, 'SIGKILL');
    expect(outcome, output).toBe('closed');
    expect(output).toContain('sluice stopped');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('installs without an engine warning: every production dependency supports the Node that "engines" names', () => {
    expect(installWarnings).not.toContain('EBADENGINE');
  });

  it('the installed `sluice --version` prints the version', async () => {
    const { stdout } = await run(join(project, 'node_modules/.bin/sluice'), ['--version'], { cwd: project });
    expect(stdout).toBe(`${version}\n`);
  });

  it("the README's limiter example runs as .mjs (loading only @sluice/limiter and cluster-key-slot) and as .ts", async () => {
    const log = join(project, 'limiter.imports');
    const expected = ['1 OK 0', '2 OK 0', '3 OK 0', '4 RATE_LIMITED 600000'];
    const asModule = await run(process.execPath, ['--import', importRecorder(project, log), 'limiter.mjs'], { cwd: project });
    expect(asModule.stdout.trim().split('\n')).toEqual(expected);
    expect(loadedPackages(log, project)).toEqual(['@sluice/limiter', 'cluster-key-slot']);
    const asTypeScript = await run(process.execPath, ['--import', tsxLoader, 'limiter.ts'], { cwd: project });
    expect(asTypeScript.stdout.trim().split('\n')).toEqual(expected);
  });

  it("the container's app directory, started by its entrypoint, takes the README's client example as .mjs (loading nothing but @sluice/client) and as .ts, and delivers it", async () => {
    const env = { PATH: process.env.PATH ?? '', SLUICE_API_KEY: apiKey };
    const log = join(project, 'client.imports');
    for (const args of [
      ['--import', importRecorder(project, log), 'client.mjs'],
      ['--import', tsxLoader, 'client.ts'],
    ]) {
      const { stdout } = await run(process.execPath, args, { cwd: project, env });
      // `sent.value.id, sent.value.replayed`: a new message, not a replay.
      const [id, replayed] = stdout.trim().split(' ');
      expect(replayed, stdout).toBe('false');
      await waitForOutput(new RegExp(`\\[sluice sms\\] id=${id} .*to=\\+8613800138000 .*body="Your code is 1234"`), `message ${id}`);
    }
    expect(loadedPackages(log, project)).toEqual(['@sluice/client']);
    server!.kill('SIGTERM');
    const [code] = (await once(server!, 'exit')) as [number | null];
    expect(code, serverOutput).toBe(0);
  });

  it('`sluice/limiter` and `sluice/client` still work, as re-exports of @sluice/limiter and @sluice/client', async () => {
    writeFileSync(
      join(project, 'reexports.ts'),
      [
        "import * as limiter from '@sluice/limiter';",
        "import * as client from '@sluice/client';",
        "import { Limiter, MemoryStore } from 'sluice/limiter';",
        "import { SluiceClient } from 'sluice/client';",
        'const same: boolean = Limiter === limiter.Limiter && MemoryStore === limiter.MemoryStore && SluiceClient === client.SluiceClient;',
        'console.log(same);',
        '',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['--import', tsxLoader, 'reexports.ts'], { cwd: project });
    expect(stdout).toBe('true\n');
  });

  it('the .ts examples type-check against the installed declarations', async () => {
    // tsc reads the package's exports and .d.ts files as a user's project would.
    await run(process.execPath, [tsc, '-p', project], { cwd: project }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc found errors:\n${error.stdout ?? String(error)}`);
    });
  });
});

/** The Dockerfile runs the very scripts the tests above run, so what CI tests is what the image does. */
describe('the Dockerfile', () => {
  it('builds with scripts/container/build.sh and starts with its entrypoint.sh', () => {
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^RUN scripts\/container\/build\.sh \/build$/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/build\/app \/app$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/app\/entrypoint\.sh"\]$/m);
    const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(/^ {4}build: \.$/m);
    // Compose refuses to start without an admin token (the console could not sign in), saying why.
    expect(compose).toMatch(/^ {6}SLUICE_ADMIN_TOKEN: \$\{SLUICE_ADMIN_TOKEN:\?is not set; export SLUICE_ADMIN_TOKEN=.+\}$/m);
  });
});
