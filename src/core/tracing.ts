/**
 * Tracing (docs/operations.md, "Tracing"): the one place that names sluice's spans and their
 * attributes, after OpenTelemetry's messaging semantic conventions. Everything goes through
 * `@opentelemetry/api` only: with no SDK registered every call is a no-op (a non-recording span,
 * no context storage), so tracing costs nothing until `sluice serve` starts the SDK.
 *
 * What a span may carry is decided here, not at the call sites: identifiers (message, tenant,
 * provider), channel, step, decision, outcome, counts and delays. Never a recipient (not even
 * masked: a trace backend is read by more people than the logs), a key, a token, a body, a
 * template's parameters or a vendor's answer text. `error.type` is a stable code, never a message.
 *
 * One trace per message: the accepting request's context (the tenant's own `traceparent` when it
 * sent one) is the parent of `admit` and of `send {channel}`, whose context is stored on the
 * message's row (`traceparent`, `tracestate`). Everything later (each attempt's
 * `process {channel}`, the vendor call, a receipt, a status webhook) starts from the stored
 * context, hours later or after a restart, as a sibling: no span waits for the next.
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/** The tracer's (and the instrumentation scope's) name. */
export const TRACER_NAME = 'sluice';

/** Attribute names: the messaging conventions' and sluice's own (`sluice.*`). */
export const ATTR = {
  system: 'messaging.system',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  messageId: 'messaging.message.id',
  batchCount: 'messaging.batch.message_count',
  errorType: 'error.type',
  httpMethod: 'http.request.method',
  httpRoute: 'http.route',
  httpStatus: 'http.response.status_code',
  tenant: 'sluice.tenant.id',
  step: 'sluice.admission.step',
  attempt: 'sluice.attempt',
  provider: 'sluice.provider.id',
  providerKind: 'sluice.provider.kind',
  outcome: 'sluice.outcome',
  retryDelayMs: 'sluice.retry.delay_ms',
  decision: 'sluice.frequency.decision',
  refusingRule: 'sluice.frequency.rule',
  ruleCount: 'sluice.frequency.rule_count',
  scheduled: 'sluice.scheduled',
  receiptStatus: 'sluice.receipt.status',
  eventType: 'sluice.event.type',
} as const;

/** `messaging.system`: no registered value fits a message service's own queue. */
export const MESSAGING_SYSTEM = 'sluice';

/** The stored form of a context: W3C Trace Context's two headers. */
export interface StoredTrace {
  traceparent: string | null;
  tracestate: string | null;
}

const tracer = trace.getTracer(TRACER_NAME);

/** A carrier getter that reads header-like records whose values may be arrays (Node's headers). */
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get(carrier: Record<string, unknown>, key: string): string | undefined {
    const value = carrier[key];
    return Array.isArray(value) ? (value[0] as string | undefined) : typeof value === 'string' ? value : undefined;
  },
};

/** The caller's context from its `traceparent`/`tracestate` headers (the SDK's propagator; none without it). */
export function contextFromHeaders(headers: Record<string, unknown>): Context {
  return propagation.extract(ROOT_CONTEXT, headers, headerGetter);
}

/** The context stored on a message's row; the root context when it has none. */
export function contextFromStored(stored: Partial<StoredTrace> | undefined): Context {
  if (!stored?.traceparent) return ROOT_CONTEXT;
  const carrier: Record<string, string> = { traceparent: stored.traceparent };
  if (stored.tracestate) carrier.tracestate = stored.tracestate;
  return propagation.extract(ROOT_CONTEXT, carrier);
}

/** The active (or given) context as headers to store or send: empty when nothing is traced. */
export function traceHeaders(from: Context = context.active()): Record<string, string> {
  // Unsampled contexts too: a message whose request was not sampled stays unsampled later.
  const carrier: Record<string, string> = {};
  propagation.inject(from, carrier);
  return carrier;
}

/** {@link traceHeaders} as the row's two columns. */
export function storedTrace(from: Context = context.active()): StoredTrace {
  const headers = traceHeaders(from);
  return { traceparent: headers.traceparent ?? null, tracestate: headers.tracestate ?? null };
}

/** The trace id of a stored `traceparent` (`00-<trace id>-<span id>-<flags>`), for the console. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = traceparent ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent) : null;
  return match ? match[1]! : null;
}

/** Sets attributes on the active span (a no-op when there is none or it does not record). */
export function annotate(attributes: Attributes): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(attributes);
}

/** `error.type` of a failure: the SluiceError's or ProviderError's stable code, else the class name; never its message. */
export function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code ? code : error instanceof Error ? error.name : 'Error';
}

/** Marks a span failed, with its `error.type`. */
export function failSpan(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  span.setAttribute(ATTR.errorType, errorTypeOf(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  links?: Link[];
  /** The parent; default the active context. */
  parent?: Context;
}

/**
 * Runs `body` inside a new span, active for what it calls; ends it when `body` settles, marking a
 * thrown error with its `error.type`. With no SDK this is `body(nonRecordingSpan)`.
 */
export function inSpan<T>(name: string, options: SpanOptions, body: (span: Span) => Promise<T>): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes ? { attributes: options.attributes } : {}),
      ...(options.links ? { links: options.links } : {}),
    },
    parent,
  );
  if (!trace.isSpanContextValid(span.spanContext())) {
    // No SDK (the no-op tracer's invalid span): skip the context switch, nothing would read it.
    return body(span).finally(() => span.end());
  }
  return context.with(trace.setSpan(parent, span), () =>
    body(span).then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        failSpan(span, error);
        span.end();
        throw error;
      },
    ),
  );
}

/** The attributes every span about one message carries. */
export function messageAttributes(operation: 'send' | 'process' | 'receive' | 'settle', channel: string, messageId?: string): Attributes {
  return {
    [ATTR.system]: MESSAGING_SYSTEM,
    [ATTR.operationType]: operation,
    [ATTR.destination]: channel,
    ...(messageId === undefined ? {} : { [ATTR.messageId]: messageId }),
  };
}

export { type Context, type Span, SpanKind };
