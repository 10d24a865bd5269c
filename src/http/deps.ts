/**
 * What the HTTP app is built from (`buildHttpApp`): the services, tenant authentication, the HTTP
 * settings it applies and the ports it reports to. `main/http-deps.ts` makes it from the runtime.
 */
import type { Logger } from 'pino';
import type { TenantView } from '../admission/context.js';
import type { Services } from '../services/contracts.js';

/** The metrics the HTTP layer serves (`GET /metrics`) and reports to. */
export interface MetricsEndpoint {
  readonly contentType: string;
  render(): Promise<string>;
  observeHttp?(route: string, method: string, status: number, seconds: number): void;
  /** A send refused before the chain ran (the key is checked before the body is read), counted as the chain counts its own. */
  observeAdmissionRejection?(interceptor: string, code: string): void;
  /** A connection closed as it was accepted, over the cap in all (`max`) or from its address (`per_ip`). */
  observeConnectionRefused?(cap: 'max' | 'per_ip'): void;
  /** A request refused by authentication: no credential, a wrong one, or its address over the failure limit. */
  observeAuthFailure?(realm: 'admin' | 'tenant', outcome: 'missing' | 'wrong' | 'throttled'): void;
}

/**
 * Wrong credentials counted per client address (`SLUICE_AUTH_FAILURE_LIMIT`): `http/auth.ts`
 * asks before checking a credential and reports each wrong one.
 */
export interface AuthFailureLimit {
  /** Milliseconds until `address`'s credentials are checked again; 0: check them now. */
  blockedFor(address: string): number;
  /** Counts a wrong credential from `address`. Never rejects: a store failure leaves it uncounted. */
  failed(address: string): Promise<void>;
}

/** The services, and what the HTTP app applies around them. */
export interface HttpDeps extends Services {
  /** Authenticates a tenant API key (shared with the chain's auth step). */
  authenticate(apiKey: string | undefined): Promise<TenantView | undefined>;
  metrics?: MetricsEndpoint;
  /** Empty: admin API off. */
  adminToken: string;
  bodyLimitBytes: number;
  /** The bound on receiving one request, headers and body (`SLUICE_HTTP_REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number;
  /** Most connections open at once (`SLUICE_HTTP_MAX_CONNECTIONS`), and from one address (`…_PER_IP`, 0: no cap). */
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Fastify's `trustProxy` (`SLUICE_TRUST_PROXY`): where `request.ip`, the address failures count under, comes from. */
  trustProxy?: boolean | string;
  /** Absent: wrong credentials are not limited. */
  authFailures?: AuthFailureLimit;
  logLevel?: string;
  /**
   * The process's logger, whose format Fastify's own lines share (readable on a terminal, JSON
   * for collectors); absent: Fastify's JSON logger at {@link logLevel}.
   */
  logger?: Logger;
  /** Serve the admin console at /console (`SLUICE_CONSOLE`); default true. */
  console?: boolean;
}
