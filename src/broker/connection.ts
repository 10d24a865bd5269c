/**
 * How the JetStream adapter reaches NATS: the server list (credential-free, checked like the
 * setting), TLS when the URLs say `tls://`, and the credentials file, read at every (re)connect so
 * an operator can rotate it in place. Nothing here logs or quotes a credential.
 */
import { readFileSync } from 'node:fs';
import {
  type Authenticator,
  type ConnectionOptions,
  credsAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
} from '@nats-io/transport-node';
import { brokerUrlProblem } from '../settings/broker-settings.js';

/** A credentials file that cannot be used; names the file and what it expects, never its content. */
export class BrokerCredentialsError extends Error {
  override name = 'BrokerCredentialsError';
}

const CREDS_MARKER = '-----BEGIN NATS USER JWT-----';

/**
 * The authenticator a credentials file's content describes: a NATS `.creds` file (user JWT and
 * nkey seed, for decentralised auth), or JSON `{"user", "password"}` or `{"token"}`.
 */
export function authenticatorOf(content: Buffer, file: string): Authenticator {
  const text = content.toString('utf8');
  if (text.includes(CREDS_MARKER)) return credsAuthenticator(new Uint8Array(content));
  const expected = `${file} must be a NATS .creds file or JSON {"user": …, "password": …} or {"token": …}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not the parser's message: it may quote the text.
    throw new BrokerCredentialsError(`${expected}: it is neither`);
  }
  const fields = (value !== null && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  if (typeof fields.token === 'string' && fields.token !== '') return tokenAuthenticator(fields.token);
  if (typeof fields.user === 'string' && typeof fields.password === 'string' && fields.user !== '')
    return usernamePasswordAuthenticator(fields.user, fields.password);
  throw new BrokerCredentialsError(`${expected}: its JSON has neither`);
}

/** Reads and checks `file` now (so a bad file fails the start), then again at every connect. */
export function fileAuthenticator(file: string): Authenticator {
  const read = (): Authenticator => {
    let content: Buffer;
    try {
      content = readFileSync(file);
    } catch (error) {
      throw new BrokerCredentialsError(
        `cannot read the broker credentials file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    return authenticatorOf(content, file);
  };
  read();
  return (nonce) => read()(nonce);
}

export interface ConnectionSettings {
  /** `nats://host:port` or `tls://host:port` (the same scheme for all), no credentials. */
  servers: readonly string[];
  /** SLUICE_BROKER_CREDENTIALS_FILE; empty or absent: none. */
  credentialsFile?: string;
  /** Shown by the server's monitoring (`/connz`): which sluice instance this is. */
  name: string;
  /** Connect and request timeout. */
  timeoutMs: number;
}

/** The nats.js options: reconnect for ever (auth errors included: a rotated file may fix them). */
export function connectionOptions(settings: ConnectionSettings): ConnectionOptions {
  if (settings.servers.length === 0) throw new Error('no broker server given');
  const problem = brokerUrlProblem(settings.servers);
  if (problem) throw new Error(problem);
  const tls = settings.servers.every((url) => url.toLowerCase().startsWith('tls://'));
  return {
    servers: [...settings.servers],
    name: settings.name,
    timeout: settings.timeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    ignoreAuthErrorAbort: true,
    // Otherwise every publish, ack and request builds two errors up front for their stack traces:
    // a third of the client's CPU per message. Its errors still say what failed.
    noAsyncTraces: true,
    authenticator: settings.credentialsFile ? fileAuthenticator(settings.credentialsFile) : undefined,
    // `tls://` requires TLS (verified against the system's CAs, or NODE_EXTRA_CA_CERTS).
    tls: tls ? {} : undefined,
  };
}

/** The server list as operators see it in logs and `/readyz` (credential-free by construction). */
export const describeServers = (servers: readonly string[]): string => servers.join(',');

/** Whether a server of version `version` (`2.9.10`) is at least `major.minor`. */
export function serverAtLeast(version: string | undefined, major: number, minor: number): boolean {
  const [a = 0, b = 0] = (version ?? '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}
