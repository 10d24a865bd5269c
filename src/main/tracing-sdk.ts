/**
 * The OpenTelemetry Node SDK, started by `sluice serve` when the environment asks for traces
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_TRACES_EXPORTER`;
 * docs/operations.md, "Tracing"). The SDK is an optional dependency, imported only then, so an
 * install without it runs as before and sluice's own code sees only `@opentelemetry/api`. The SDK
 * reads every standard `OTEL_*` variable itself: service name, resource attributes, sampler,
 * exporter, protocol, headers.
 */

/** What {@link startTracing} did, for the start's log line. */
export type TracingStart =
  | { kind: 'off' }
  | { kind: 'started'; exporter: string; shutdown(): Promise<void> }
  /** Asked for, and the SDK is not installed (or failed to start): the reason, for a warning. */
  | { kind: 'unavailable'; reason: string };

/** Whether `env` asks for traces. `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` say no. */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The module's name in a variable: TypeScript and bundlers leave an optional dependency's import alone. */
const SDK_MODULE = '@opentelemetry/sdk-node';

/** Starts the Node SDK when {@link tracingRequested}; never throws (a tracing problem must not stop sending). */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingStart> {
  if (!tracingRequested(env)) return { kind: 'off' };
  let sdkModule: typeof import('@opentelemetry/sdk-node');
  try {
    sdkModule = (await import(SDK_MODULE)) as typeof import('@opentelemetry/sdk-node');
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND';
    return {
      kind: 'unavailable',
      reason: missing
        ? `${SDK_MODULE} is not installed: tracing is off (npm install ${SDK_MODULE}, docs/operations.md "Tracing")`
        : `${SDK_MODULE} could not be loaded: ${(error as Error).message}`,
    };
  }
  try {
    // The service name is the SDK's from OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES; `sluice` otherwise.
    const named = env.OTEL_SERVICE_NAME || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
    const sdk = new sdkModule.NodeSDK(named ? {} : { serviceName: 'sluice' });
    sdk.start();
    return { kind: 'started', exporter: env.OTEL_TRACES_EXPORTER?.trim() || 'otlp', shutdown: () => sdk.shutdown() };
  } catch (error) {
    return { kind: 'unavailable', reason: `the OpenTelemetry SDK did not start: ${(error as Error).message}` };
  }
}
