/**
 * The workspace packages as a user installs them, each alone (docs/architecture.md, "Packages"):
 *
 * - packages/limiter and packages/client are packed from a copy of the checkout (`npm pack -w`,
 *   whose prepacks build each dist/ from src/);
 * - each tarball goes into its own fresh project, made as the READMEs say: `npm init -y`,
 *   `npm pkg set type=module`, `tsc --init --types node` (TypeScript's defaults: strict,
 *   `exactOptionalPropertyTypes`, `module: nodenext`), then the tarball (with ioredis for the
 *   limiter) and @types/node, installed offline at the versions of package-lock.json; TypeScript and
 *   tsx are the checkout's, at those same versions;
 * - there none of the server's dependencies is installed, and the package README's example runs
 *   through tsx (the limiter's against the test Redis, the client's against a demo server) and
 *   type-checks with that tsconfig.json.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../support/net.js';
import { describeWith, servers } from '../support/servers.js';
import {
  copyCheckout,
  importRecorder,
  installedPackages,
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
const SERVER_PACKAGES = ['fastify', 'kysely', 'better-sqlite3', 'pg', 'mysql2', 'sluice', 'pino', 'nodemailer', '@nats-io/jetstream'];

/** A project as the package READMEs make it, depending on one tarball. */
async function makeProject(dir: string, tarball: string, folder: string, registry: string[]): Promise<void> {
  mkdirSync(dir);
  await run('npm', ['init', '-y'], { cwd: dir });
  await run('npm', ['pkg', 'set', 'type=module'], { cwd: dir });
  await run(process.execPath, [tsc, '--init', '--types', 'node'], { cwd: dir });
  writeProject(dir, { tarballs: [{ tarball, folder }], registry, devRegistry: ['@types/node'] });
}

describeWith(servers.redisUrl, 'SLUICE_TEST_REDIS_URL', '@sluice/limiter and @sluice/client, each installed alone', () => {
  const work = mkdtempSync(join(tmpdir(), 'sluice-libraries-'));
  const copy = join(work, 'checkout');
  const out = join(work, 'out');
  const libraries = {
    limiter: { tarball: join(out, `sluice-limiter-${version}.tgz`), project: join(work, 'limiter'), registry: ['ioredis'] },
    client: { tarball: join(out, `sluice-client-${version}.tgz`), project: join(work, 'client'), registry: [] },
  };
  const installs: Record<string, { warnings: string; ms: number }> = {};
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let apiKey = '';
  let baseUrl = '';

  /** `sluice serve --demo` from the checkout's sources, in a folder of its own; its URL and demo key. */
  const startServer = async () => {
    const data = join(work, 'data');
    mkdirSync(data);
    const port = await freePort();
    const env = { PATH: process.env.PATH ?? '', SLUICE_PORT: String(port), SLUICE_HOST: '127.0.0.1' };
    server = spawn(process.execPath, ['--import', tsxLoader, join(root, 'src/cli/main.ts'), 'serve', '--demo'], {
      cwd: data,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const demoLine = /curl -si (http:\/\/\S+)\/v1\/messages -H 'Authorization: Bearer (sk_[\w-]+)'/;
    const seen = new Promise<RegExpExecArray>((resolve, reject) => {
      const read = (chunk: Buffer) => {
        serverOutput += chunk.toString();
        const match = demoLine.exec(serverOutput);
        if (match) resolve(match);
      };
      server!.stdout!.on('data', read);
      server!.stderr!.on('data', read);
      server!.on('exit', (code) => reject(new Error(`the demo server exited (${code}):\n${serverOutput}`)));
    });
    const [, url, key] = await seen;
    baseUrl = url!;
    apiKey = key!;
  };

  beforeAll(async () => {
    mkdirSync(out);
    await copyCheckout(copy);
    const serving = startServer();
    await run('npm', ['pack', '-w', 'packages/limiter', '-w', 'packages/client', '--pack-destination', out, '--no-audit', '--no-fund'], {
      cwd: copy,
      timeout: 240_000,
      maxBuffer: 64 << 20,
    }).catch((error: { stderr?: string }) => {
      throw new Error(`npm pack of the workspaces failed:\n${error.stderr ?? String(error)}`);
    });
    for (const [name, { tarball, project, registry }] of Object.entries(libraries)) {
      await makeProject(project, tarball, join(copy, 'packages', name), registry);
      installs[name] = await installOffline(project);
    }
    await serving;
  }, 400_000);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
    rmSync(work, { recursive: true, force: true });
  });

  const tarballFiles = async (tarball: string) => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    return stdout
      .trim()
      .split('\n')
      .map((path) => path.replace(/^package\//, ''));
  };

  it('@sluice/limiter holds its build with the joined Lua scripts, a README and the license: no sources, pieces or source maps', async () => {
    const files = await tarballFiles(libraries.limiter.tarball);
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/stores/redis/scripts/check-batch.lua',
      'dist/events/scripts/risk-batch.lua',
    ])
      expect(files, file).toContain(file);
    expect(files.filter((path) => !/^(dist\/.*\.(js|d\.ts|lua)|package\.json|README\.md|LICENSE)$/.test(path))).toEqual([]);
    expect(files.filter((path) => path.includes('/includes/'))).toEqual([]);
    const installed = readFileSync(
      join(libraries.limiter.project, 'node_modules/@sluice/limiter/dist/stores/redis/scripts/check-batch.lua'),
      'utf8',
    );
    expect(installed).not.toContain('@include');
  });

  it("@sluice/client holds the client's modules and the declarations of the API's wire types they name, and no server module", async () => {
    const files = await tarballFiles(libraries.client.tarball);
    for (const file of ['package.json', 'README.md', 'LICENSE', 'dist/client/index.js', 'dist/client/index.d.ts', 'dist/api/messages.d.ts'])
      expect(files, file).toContain(file);
    expect(files.filter((path) => path.endsWith('.js') && !path.startsWith('dist/client/'))).toEqual([]);
    expect(files.filter((path) => !/^(dist\/.*\.(js|d\.ts)|package\.json|README\.md|LICENSE)$/.test(path))).toEqual([]);
  });

  it("each installs alone, without a warning and without any of the server's dependencies", () => {
    const limiter = installedPackages(libraries.limiter.project);
    expect(limiter).toEqual(expect.arrayContaining(['@sluice/limiter', 'cluster-key-slot', 'ioredis']));
    expect(limiter.filter((name) => SERVER_PACKAGES.includes(name))).toEqual([]);
    // The client's one dependency is TypeBox, for its declarations; @types/node is the project's.
    expect(installedPackages(libraries.client.project)).toEqual(['@sinclair/typebox', '@sluice/client', '@types/node', 'undici-types']);
    for (const [name, { warnings }] of Object.entries(installs)) expect(warnings, name).not.toMatch(/EBADENGINE|ERR/);
    const tarballs = Object.entries(libraries).map(([name, { tarball }]) => `${name} ${statSync(tarball).size} B`);
    console.info(
      `packed: ${tarballs.join(', ')}; installed in ${Object.entries(installs)
        .map(([n, i]) => `${n} ${i.ms} ms`)
        .join(', ')}`,
    );
  });

  it("@sluice/limiter's README example runs against Redis, loading none but the limiter, cluster-key-slot and ioredis's packages", async () => {
    const { project } = libraries.limiter;
    const example = markdownExample(readFileSync(join(root, 'packages/limiter/README.md'), 'utf8'), '# @sluice/limiter');
    // A subject of its own per run: the test Redis keeps the counts and the ban of the runs before.
    const subject = `acme:sms:+86138${Date.now()}`;
    writeFileSync(join(project, 'limiter.ts'), example.replace("'acme:sms:+8613800000000'", JSON.stringify(subject)));
    const log = join(project, 'limiter.imports');
    const { stdout } = await run(process.execPath, ['--import', importRecorder(project, log), '--import', tsxLoader, 'limiter.ts'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', REDIS_URL: servers.redisUrl! },
      timeout: 60_000,
    });
    expect(stdout.trim().split('\n')).toEqual(['1 OK 0', '2 OK 0', '3 OK 0', '4 RATE_LIMITED 600000']);
    // ioredis and what it depends on, as installed.
    const ioredis = new Set<string>();
    const add = (name: string) => {
      if (ioredis.has(name)) return;
      ioredis.add(name);
      for (const dependency of Object.keys(readJson(join(project, 'node_modules', name, 'package.json')).dependencies ?? {}))
        add(dependency);
    };
    add('ioredis');
    const loaded = loadedPackages(log, project);
    expect(loaded).toEqual(expect.arrayContaining(['@sluice/limiter', 'cluster-key-slot', 'ioredis']));
    expect(loaded.filter((name) => name !== '@sluice/limiter' && !ioredis.has(name))).toEqual([]);
  });

  it("@sluice/client's README example sends a message to a demo server, loading nothing but the client", async () => {
    const { project } = libraries.client;
    const example = markdownExample(readFileSync(join(root, 'packages/client/README.md'), 'utf8'), '# @sluice/client');
    expect(example).toContain("'http://127.0.0.1:3000'");
    writeFileSync(join(project, 'client.ts'), example.replace("'http://127.0.0.1:3000'", JSON.stringify(baseUrl)));
    const log = join(project, 'client.imports');
    const { stdout } = await run(process.execPath, ['--import', importRecorder(project, log), '--import', tsxLoader, 'client.ts'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', SLUICE_API_KEY: apiKey },
      timeout: 60_000,
    });
    const [id, replayed] = stdout.trim().split(' ');
    expect(replayed, stdout).toBe('false');
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    expect(loadedPackages(log, project)).toEqual(['@sluice/client']);
  });

  it('each example type-checks under the tsconfig.json of `tsc --init --types node` (exactOptionalPropertyTypes included)', {
    timeout: 180_000,
  }, async () => {
    // tsc --init writes comments into tsconfig.json: tsc itself reads it.
    const { stdout: config } = await run(process.execPath, [tsc, '-p', libraries.client.project, '--showConfig']);
    const { compilerOptions } = JSON.parse(config) as { compilerOptions: Record<string, unknown> };
    expect(compilerOptions).toMatchObject({ exactOptionalPropertyTypes: true, strict: true, module: 'nodenext' });
    await Promise.all(
      Object.values(libraries).map(({ project }) =>
        run(process.execPath, [tsc, '-p', project, '--noEmit'], { cwd: project }).catch((error: { stdout?: string }) => {
          throw new Error(`tsc found errors in ${project}:\n${error.stdout ?? String(error)}`);
        }),
      ),
    );
  });
});
