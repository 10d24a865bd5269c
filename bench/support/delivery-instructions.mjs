/**
 * Accept-to-sent cost of one build's server, driven over its HTTP API only, so that the same
 * driver measures any build (docs/benchmarks.md, "Delivery: instructions per message, two builds").
 * The server (`<repo>/dist/cli/main.js serve`, embedded SQLite, the http provider to a local stub)
 * takes `warm` messages, then `count` measured ones: under callgrind (`cg`, instrumentation on for
 * the measured span only; total Ir in `<outFile>.1`) or by its CPU time from /proc (`cpu`).
 *
 *   node bench/support/delivery-instructions.mjs <repo> <cg|cpu> <warm> <count> <outFile>
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [repo, mode, warmArg, countArg, out] = process.argv.slice(2);
const WARM = Number(warmArg);
const COUNT = Number(countArg);
const dir = mkdtempSync(join(tmpdir(), 'deliv-cg-'));
let arrivals = 0;
const stub = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    arrivals++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((r) => stub.listen(0, '127.0.0.1', r));
const stubUrl = `http://127.0.0.1:${stub.address().port}/hook`;
const port = 20000 + Math.floor(Math.random() * 20000);
const env = {
  ...process.env,
  SLUICE_DB_URL: `sqlite:${dir}/db.sqlite`,
  SLUICE_SECRET_KEY_FILE: `${dir}/secret.key`,
  SLUICE_PORT: String(port),
  SLUICE_HOST: '127.0.0.1',
  SLUICE_ADMIN_TOKEN: 'bench-admin-token-0123456789abcdef',
  SLUICE_WEBHOOK_ALLOW_PRIVATE: 'true',
  SLUICE_SEND_CONCURRENCY: '32',
  SLUICE_LOG_LEVEL: 'warn',
};
const node = ['node', join(repo, 'dist/cli/main.js'), 'serve'];
execFileSync('node', [join(repo, 'dist/cli/main.js'), 'migrate'], { env, stdio: 'ignore' });
const argv = mode === 'cg' ? ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, ...node] : node;
const child = spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${port}`;
process.on('exit', () => child.kill('SIGKILL'));
for (;;) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {}
  await new Promise((r) => setTimeout(r, 200));
}
const admin = { authorization: `Bearer ${env.SLUICE_ADMIN_TOKEN}`, 'content-type': 'application/json' };
const tenant = await (
  await fetch(`${base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'bench' }) })
).json();
const provider = await fetch(`${base}/v1/admin/providers`, {
  method: 'POST',
  headers: admin,
  body: JSON.stringify({
    scope: tenant.id,
    channel: 'webhook',
    kind: 'http',
    name: 'stub',
    priority: 1,
    qps: 100000,
    config: { url: stubUrl, timeoutMs: 5000 },
    secret: { signingSecret: 'bench-signing-secret' },
  }),
});
if (provider.status !== 201) throw new Error(`provider: ${provider.status} ${await provider.text()}`);
const headers = { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' };
let seq = 0;
async function sendMany(n) {
  let next = 0;
  const ids = [];
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < n) {
        next++;
        const i = seq++;
        let answer;
        for (let attempt = 0; ; attempt++) {
          try {
            answer = await fetch(`${base}/v1/messages`, {
              method: 'POST',
              headers,
              body: JSON.stringify({ channel: 'webhook', to: `bench-${i}`, body: `hello ${i}` }),
            });
            break;
          } catch (error) {
            if (attempt > 5) throw error; // a kept-alive socket the slow server closed: send again
          }
        }
        if (answer.status !== 202) throw new Error(`send: ${answer.status} ${await answer.text()}`);
        ids.push((await answer.json()).id);
      }
    }),
  );
  return ids;
}
async function allSent(ids, target) {
  while (arrivals < target) await new Promise((r) => setTimeout(r, 20));
  for (const id of ids.slice(-20)) {
    for (;;) {
      const m = await (await fetch(`${base}/v1/messages/${id}`, { headers })).json();
      if (m.status === 'sent') break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
const cpu = () => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms (USER_HZ 100)
};
await allSent(await sendMany(WARM), WARM);
if (mode === 'cg') execFileSync('callgrind_control', ['-i', 'on', String(child.pid)]);
const cpu0 = cpu();
const t0 = performance.now();
await allSent(await sendMany(COUNT), WARM + COUNT);
const wall = performance.now() - t0;
const cpuMs = cpu() - cpu0;
if (mode === 'cg') {
  execFileSync('callgrind_control', ['-i', 'off', String(child.pid)]);
  execFileSync('callgrind_control', ['-d', String(child.pid)]);
}
console.log(
  JSON.stringify({
    repo,
    mode,
    count: COUNT,
    cpuUsPerMessage: (cpuMs * 1000) / COUNT,
    wallMs: Math.round(wall),
    rate: Math.round((COUNT / wall) * 1000),
  }),
);
child.kill('SIGTERM');
await new Promise((r) => child.on('exit', r));
stub.close();
rmSync(dir, { recursive: true, force: true });
