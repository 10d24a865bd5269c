/**
 * A real export: `sluice serve --demo` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP
 * receiver this test runs (JSON, decoded here) receives the spans of 100 messages, each trace
 * whole (every span's parent in its trace, the caller's aside), and no attribute holds the key,
 * a body or a recipient.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../support/net.js';

const cli = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

let child: ChildProcess | undefined;
let receiver: Server | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  receiver?.close();
});

it('exports the whole trace of each of 100 messages to an OTLP/HTTP receiver', async () => {
  const spans: OtlpSpan[] = [];
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const decoded = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const resource of decoded.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const receiverPort = await freePort();
  await new Promise<void>((resolve) => receiver!.listen(receiverPort, '127.0.0.1', resolve));

  const cwd = mkdtempSync(join(tmpdir(), 'sluice-otlp-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('SLUICE_') || key.startsWith('OTEL_')) delete env[key];
  Object.assign(env, {
    SLUICE_PORT: String(port),
    SLUICE_LOG_LEVEL: 'warn',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
  });
  child = spawn(process.execPath, ['--import', tsx, cli, 'serve', '--demo'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const until = async (condition: () => boolean, tries = 600) => {
    for (let i = 0; i < tries && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    return condition();
  };
  const curl = /curl -si (\S+) -H 'Authorization: Bearer (sk_[\w-]+)'/;
  expect(await until(() => curl.test(output)), output).toBe(true);
  const [, url, key] = curl.exec(output)!;

  const ids: string[] = [];
  for (let i = 0; i < 100; i++) {
    const to = `+86138001${String(10_000 + i)}`;
    const answer = await fetch(url!, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', to, body: `otlp body ${i}` }),
    });
    expect(answer.status, await answer.clone().text()).toBe(202);
    ids.push(((await answer.json()) as { id: string }).id);
  }
  // Every message's attempt printed by the console provider, then a stop flushes the last spans.
  expect(await until(() => ids.every((id) => output.includes(`id=${id}`)))).toBe(true);
  const exited = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;

  const byTrace = new Map<string, OtlpSpan[]>();
  for (const span of spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
  const messageId = (span: OtlpSpan) =>
    span.attributes?.find((attribute) => attribute.key === 'messaging.message.id')?.value.stringValue as string | undefined;
  for (const id of ids) {
    const send = spans.find((span) => span.name === 'send sms' && messageId(span) === id);
    expect(send, id).toBeDefined();
    const trace = byTrace.get(send!.traceId)!;
    const names = trace.map((span) => span.name);
    for (const name of ['POST /v1/messages', 'admit', 'frequency', 'persist', 'send sms', 'process sms', 'console send'])
      expect(names, `${id}: ${name}`).toContain(name);
    const spanIds = new Set(trace.map((span) => span.spanId));
    for (const span of trace) if (span.parentSpanId) expect(spanIds.has(span.parentSpanId), `${id}: ${span.name}'s parent`).toBe(true);
    expect(trace.filter((span) => !span.parentSpanId).map((span) => span.name)).toEqual(['POST /v1/messages']);
  }
  const text = JSON.stringify(spans.map((span) => span.attributes ?? []));
  expect(text).not.toContain(key);
  expect(text).not.toContain('otlp body');
  expect(text).not.toContain('+86138001');
}, 120_000);
