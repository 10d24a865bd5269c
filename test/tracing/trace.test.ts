/**
 * One trace per message (issue 37), in process with the SDK's in-memory exporter: a scheduled
 * message accepted through `POST /v1/messages` under the caller's own `traceparent`, refused once
 * by the first provider and sent by the second, forms one trace whose every span's parent is in
 * it; a restart between accept and send keeps it; no span carries a key, a body or a recipient.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/app.js';
import { startWorker } from '../../src/main/worker.js';
import {
  addWebhookProvider,
  loadMessages,
  silentConsole,
  startWebhookStub,
  tempDir,
  testEnv,
  testRuntime,
  waitFor,
} from '../delivery/delivery-support.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});
afterEach(() => exporter.reset());

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every span of `traceId`: each one's parent is another of them, or the caller's span. */
function expectConnected(spans: readonly ReadableSpan[], traceId: string): void {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  for (const span of spans) {
    expect(span.spanContext().traceId, span.name).toBe(traceId);
    const parent = span.parentSpanContext?.spanId;
    expect(parent === CALLER_SPAN || (parent !== undefined && ids.has(parent)), `${span.name}'s parent`).toBe(true);
  }
}

/** No attribute value holds one of `secrets`. */
function expectNothingOf(spans: readonly ReadableSpan[], secrets: readonly string[]): void {
  for (const span of spans)
    for (const [key, value] of Object.entries(span.attributes))
      for (const secret of secrets) expect(String(value), `${span.name} ${key}`).not.toContain(secret);
}

async function setUp(dir: string) {
  const runtime = await testRuntime(testEnv(dir));
  const app = await buildHttpApp(runtime.http);
  return { runtime, app };
}

it('a scheduled message, failed by one provider and sent by the next, is one connected trace under the caller', async () => {
  const temp = tempDir();
  cleanups.push(() => temp.cleanup());
  const stub = await startWebhookStub();
  cleanups.push(() => stub.close());
  let calls = 0;
  stub.answer = () => (calls++ === 0 ? 503 : 200);
  const { runtime, app } = await setUp(temp.dir);
  cleanups.push(() => runtime.close());
  cleanups.push(() => app.close());
  const tenant = await runtime.http.tenants.createTenant(`trace-${Date.now()}`);
  await addWebhookProvider(runtime, tenant.id, `${stub.url}/first`, { name: 'first', priority: 1 });
  await addWebhookProvider(runtime, tenant.id, `${stub.url}/second`, { name: 'second', priority: 2 });
  const delivery = startWorker(runtime, silentConsole());
  cleanups.push(() => delivery.stop());

  const body = 'the body is secret 8431';
  const recipient = 'hook-recipient-5577';
  const answer = await app.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { authorization: `Bearer ${tenant.apiKey}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    payload: { channel: 'webhook', to: recipient, body, sendAt: new Date(Date.now() + 3000).toISOString() },
  });
  expect(answer.statusCode, answer.body).toBe(202);
  const id = answer.json<{ id: string }>().id;
  expect(await waitFor(async () => (await loadMessages(runtime, [id])).get(id)?.status === 'sent', 20_000)).toBe(true);
  const stored = (await loadMessages(runtime, [id])).get(id)!;
  expect(stored.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
  expect(stored.attempts).toBe(2);
  expect(await waitFor(() => exporter.getFinishedSpans().filter((span) => span.name === 'process webhook').length === 2, 5000)).toBe(true);

  const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === CALLER_TRACE);
  expectConnected(spans, CALLER_TRACE);
  const named = (name: string) => spans.filter((span) => span.name === name);
  expect(named('POST /v1/messages')).toHaveLength(1);
  expect(named('POST /v1/messages')[0]!.attributes['http.response.status_code']).toBe(202);
  expect(named('admit')).toHaveLength(1);
  for (const step of ['auth', 'validation', 'blacklist', 'frequency', 'persist']) expect(named(step), step).toHaveLength(1);
  const send = named('send webhook');
  expect(send).toHaveLength(1);
  expect(send[0]!.kind).toBe(3); // PRODUCER
  expect(send[0]!.attributes).toMatchObject({
    'messaging.system': 'sluice',
    'messaging.operation.type': 'send',
    'messaging.destination.name': 'webhook',
    'messaging.message.id': id,
  });
  // The stored context is the send span's: every attempt is its child, beside the other.
  expect(stored.traceparent).toContain(send[0]!.spanContext().spanId);
  const attempts = named('process webhook').sort((a, b) => Number(a.attributes['sluice.attempt']) - Number(b.attributes['sluice.attempt']));
  for (const attempt of attempts) {
    expect(attempt.kind).toBe(4); // CONSUMER
    expect(attempt.parentSpanContext?.spanId).toBe(send[0]!.spanContext().spanId);
    expect(attempt.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.message.id': id });
  }
  expect(attempts[0]!.attributes).toMatchObject({ 'sluice.outcome': 'retry', 'error.type': 'HTTP_503' });
  expect(attempts[0]!.attributes['sluice.retry.delay_ms']).toBeTypeOf('number');
  expect(attempts[1]!.attributes).toMatchObject({ 'sluice.outcome': 'sent' });
  expect(attempts[0]!.attributes['sluice.provider.id']).not.toBe(attempts[1]!.attributes['sluice.provider.id']);
  const vendorCalls = named('http send');
  expect(vendorCalls).toHaveLength(2);
  for (const call of vendorCalls) expect(call.kind).toBe(2); // CLIENT
  expect(vendorCalls.map((call) => call.parentSpanContext?.spanId).sort()).toEqual(attempts.map((a) => a.spanContext().spanId).sort());

  expectNothingOf(exporter.getFinishedSpans(), [tenant.apiKey, body, recipient, stub.url]);
});

it('a restart between accept and send keeps the trace', async () => {
  const temp = tempDir();
  cleanups.push(() => temp.cleanup());
  const stub = await startWebhookStub();
  cleanups.push(() => stub.close());
  const first = await setUp(temp.dir);
  const tenant = await first.runtime.http.tenants.createTenant(`restart-${Date.now()}`);
  await addWebhookProvider(first.runtime, tenant.id, `${stub.url}/only`, { name: 'only' });
  const answer = await first.app.inject({
    method: 'POST',
    url: '/v1/messages',
    headers: { authorization: `Bearer ${tenant.apiKey}`, traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    payload: { channel: 'webhook', to: 'restart-recipient', body: 'hello', sendAt: new Date(Date.now() + 3000).toISOString() },
  });
  const id = answer.json<{ id: string }>().id;
  // Nothing delivers in the first process: no worker ran before it closed.
  await first.app.close();
  await first.runtime.close();

  const second = await setUp(temp.dir);
  cleanups.push(() => second.runtime.close());
  cleanups.push(() => second.app.close());
  const delivery = startWorker(second.runtime, silentConsole());
  cleanups.push(() => delivery.stop());
  expect(await waitFor(async () => (await loadMessages(second.runtime, [id])).get(id)?.status === 'sent', 20_000)).toBe(true);
  expect(await waitFor(() => exporter.getFinishedSpans().some((span) => span.name === 'process webhook'), 5000)).toBe(true);
  const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === CALLER_TRACE);
  expectConnected(spans, CALLER_TRACE);
  expect(spans.map((span) => span.name)).toEqual(
    expect.arrayContaining(['POST /v1/messages', 'send webhook', 'process webhook', 'http send']),
  );
});
