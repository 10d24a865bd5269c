/**
 * Email through an SMTP relay (nodemailer 7, pooled connections).
 *
 * - Message-ID is derived from the sluice id (`<sluice-<id>@<domain>>`), so a retried attempt
 *   carries the same Message-ID and receivers or the relay can drop the duplicate.
 * - Classification follows RFC 5321: a 4yz reply is a transient failure (retry), a 5yz reply is
 *   permanent (bad address, rejected content, bad credentials). No reply at all (refused,
 *   reset, timed out) is retried.
 */
import { connect, type LookupFunction, type Socket } from 'node:net';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Channel } from '../core/channels.js';
import { maskRecipient } from './mask.js';
import { type OutboundMessage, type Provider, ProviderError, type SendResult, toProviderError, truncate } from './provider.js';
import { defineProviderKind } from './provider-kind.js';

export interface SmtpProviderOptions {
  id: string;
  channel: Channel;
  host: string;
  port: number;
  /** TLS from the first byte (port 465). Otherwise STARTTLS when the server offers it. */
  secure: boolean;
  /** The From address: `"Sluice" <noreply@example.com>` or `noreply@example.com`. */
  from: string;
  /** The right-hand side of Message-IDs; the From address's domain by default. */
  messageIdDomain?: string;
  auth?: { user: string; pass: string };
  /** Never upgrade with STARTTLS (a local relay). */
  ignoreTLS?: boolean;
  /** Refuse to send unless STARTTLS succeeds. */
  requireTLS?: boolean;
  /** Verify the server's certificate (default true). */
  tlsRejectUnauthorized?: boolean;
  /** Pooled connections to the relay (default 5). */
  maxConnections?: number;
  timeoutMs: number;
  /**
   * Resolves the relay's host for each new connection (the process's bounded resolver). Absent:
   * nodemailer resolves it, with c-ares but falling back to `dns.lookup` on libuv's thread pool.
   */
  lookup?: LookupFunction | undefined;
}

/** SMTP error codes nodemailer uses for "we never got an answer" rather than "the server said no". */
const TRANSPORT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNRESET', 'ECONNREFUSED', 'EPROTOCOL', 'ETLS']);

export function createSmtpProvider(options: SmtpProviderOptions): Provider {
  // A login on a connection that never turned TLS sends the password in clear to anyone on the
  // path: with credentials, STARTTLS is required unless the config says otherwise in so many
  // words (`requireTLS: false` or `ignoreTLS: true`, for a relay on a trusted network).
  const requireTLS = options.requireTLS ?? (options.auth !== undefined && !options.secure && options.ignoreTLS !== true);
  const transportOptions: SMTPTransport.Options & { pool: true; maxConnections: number } = {
    pool: true,
    maxConnections: options.maxConnections ?? 5,
    host: options.host,
    port: options.port,
    secure: options.secure,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    ...(options.auth ? { auth: { user: options.auth.user, pass: options.auth.pass } } : {}),
    ...(options.ignoreTLS === undefined ? {} : { ignoreTLS: options.ignoreTLS }),
    requireTLS,
    tls: { rejectUnauthorized: options.tlsRejectUnauthorized ?? true },
    // nodemailer's own logger stays off: it would print envelopes and, at debug level, AUTH lines.
    logger: false,
    debug: false,
    // The TCP connection is ours, through `lookup`; nodemailer speaks SMTP (and TLS, checked against
    // the host name) over it, and never resolves the host itself.
    ...(options.lookup ? { getSocket: connectThrough(options.lookup, options.timeoutMs) } : {}),
  };
  const transport = nodemailer.createTransport(transportOptions);
  const domain = options.messageIdDomain ?? domainOf(options.from);
  let closed = false;

  return {
    id: options.id,
    kind: 'smtp',
    channel: options.channel,
    async send(message: OutboundMessage, signal?: AbortSignal): Promise<SendResult> {
      const messageId = `<sluice-${message.id.replace(/[^A-Za-z0-9._-]/g, '_')}@${domain}>`;
      const sending = transport.sendMail({
        from: options.from,
        to: message.to,
        subject: message.subject ?? '',
        messageId,
        headers: { 'X-Sluice-Message-Id': message.id },
        ...(message.body === undefined ? {} : { text: message.body }),
        ...(message.html === undefined ? {} : { html: message.html }),
      });
      try {
        await bounded(sending, options.timeoutMs, signal);
      } catch (error) {
        throw classifySmtpError(options.id, message.to, error, options.timeoutMs, signal);
      }
      return { providerMessageId: messageId };
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      transport.close();
    },
  };
}

/**
 * nodemailer's `getSocket` hook: a TCP connection to the relay whose host `lookup` resolves, handed
 * over once connected (nodemailer then upgrades it to TLS for `secure`, or with STARTTLS).
 */
function connectThrough(lookup: LookupFunction, timeoutMs: number) {
  return (target: { host?: string; port?: number }, callback: (error: Error | null, socketOptions?: { connection: Socket }) => void) => {
    const socket = connect({ host: target.host ?? 'localhost', port: target.port ?? 587, lookup });
    let done = false;
    const finish = (error: Error | null) => {
      if (done) return;
      done = true;
      socket.setTimeout(0);
      socket.removeListener('error', finish);
      if (error) {
        socket.destroy();
        callback(error);
      } else callback(null, { connection: socket });
    };
    socket.setTimeout(timeoutMs, () =>
      finish(Object.assign(new Error(`no connection to the relay within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    socket.once('error', finish);
    socket.once('connect', () => finish(null));
  };
}

/** nodemailer has no abort: the attempt is abandoned (and may still complete) once the bound passes. */
function bounded<T>(work: Promise<T>, timeoutMs: number, signal: AbortSignal | undefined): Promise<T> {
  work.catch(() => undefined); // an abandoned attempt must not surface as an unhandled rejection
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => finish(() => reject(signal?.reason ?? new DOMException('aborted', 'AbortError')));
    const timer = setTimeout(() => finish(() => reject(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'))), timeoutMs);
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** Maps a nodemailer failure to retryable (4yz, no answer) or permanent (5yz, refused envelope). */
function classifySmtpError(providerId: string, to: string, error: unknown, timeoutMs: number, signal?: AbortSignal): ProviderError {
  const smtp = error as { responseCode?: number; code?: string; response?: string; command?: string } | null;
  const responseCode = typeof smtp?.responseCode === 'number' ? smtp.responseCode : undefined;
  const recipient = maskRecipient(to);
  if (responseCode !== undefined) {
    const reply = smtp?.response ? `: ${truncate(maskEmails(smtp.response))}` : '';
    const command = smtp?.command ? ` on ${smtp.command.split(' ')[0]}` : '';
    return new ProviderError(`provider ${providerId}: SMTP ${responseCode}${command} for ${recipient}${reply}`, {
      retryable: responseCode >= 400 && responseCode < 500,
      // Authentication required, too weak, or refused, or no STARTTLS where it is required
      // (nodemailer's ETLS with the relay's answer): this relay, not the message.
      providerFault: responseCode === 530 || responseCode === 534 || responseCode === 535 || smtp?.code === 'ETLS',
      code: `SMTP_${responseCode}`,
      status: responseCode,
      cause: error,
    });
  }
  const code = smtp?.code;
  if (code && !TRANSPORT_CODES.has(code) && ['EENVELOPE', 'EMESSAGE', 'EAUTH', 'ENOAUTH'].includes(code)) {
    const text = error instanceof Error ? truncate(maskEmails(error.message)) : code;
    return new ProviderError(`provider ${providerId}: SMTP ${code} for ${recipient}: ${text}`, {
      retryable: false,
      providerFault: code === 'EAUTH' || code === 'ENOAUTH',
      code: `SMTP_${code}`,
      cause: error,
    });
  }
  const converted = toProviderError(providerId, error, { timeoutMs, signal });
  return code && converted.code === 'NETWORK'
    ? new ProviderError(`provider ${providerId}: SMTP ${code} (no answer from the relay)`, {
        retryable: true,
        code: 'NETWORK',
        cause: error,
      })
    : converted;
}

function domainOf(from: string): string {
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
  const at = address.lastIndexOf('@');
  return at >= 0 ? address.slice(at + 1).trim() : 'sluice.invalid';
}

/** SMTP replies often quote the address; a log line must not. */
function maskEmails(text: string): string {
  return text.replace(/[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+/g, (address) => maskRecipient(address));
}

/** `smtp`: email through an SMTP relay; `secret.password` only counts with `secret.user`. */
export const smtpKind = defineProviderKind({
  kind: 'smtp',
  channel: 'email',
  config: {
    required: ['host', 'from'],
    optional: ['port', 'secure', 'messageIdDomain', 'ignoreTLS', 'requireTLS', 'tlsRejectUnauthorized', 'maxConnections'],
  },
  secret: { required: [], optional: ['user', 'password'] },
  credentialRoute: ['host', 'port', 'secure', 'requireTLS', 'ignoreTLS', 'tlsRejectUnauthorized'],
  build(read, { id, channel, lookup }) {
    const secure = read.optionalBoolean('secure') ?? false;
    const user = read.optionalSecretString('user');
    const messageIdDomain = read.optionalString('messageIdDomain');
    const ignoreTLS = read.optionalBoolean('ignoreTLS');
    const requireTLS = read.optionalBoolean('requireTLS');
    const tlsRejectUnauthorized = read.optionalBoolean('tlsRejectUnauthorized');
    const maxConnections = read.optionalInteger('maxConnections', { min: 1, max: 100 });
    return createSmtpProvider({
      id,
      channel,
      host: read.string('host'),
      // 465 is SMTP over TLS from the first byte; 587 submission upgrades with STARTTLS.
      port: read.optionalInteger('port', { min: 1, max: 65_535 }) ?? (secure ? 465 : 587),
      secure,
      from: read.string('from'),
      timeoutMs: read.timeoutMs(),
      lookup,
      ...(user === undefined ? {} : { auth: { user, pass: read.secretString('password') } }),
      ...(messageIdDomain === undefined ? {} : { messageIdDomain }),
      ...(ignoreTLS === undefined ? {} : { ignoreTLS }),
      ...(requireTLS === undefined ? {} : { requireTLS }),
      ...(tlsRejectUnauthorized === undefined ? {} : { tlsRejectUnauthorized }),
      ...(maxConnections === undefined ? {} : { maxConnections }),
    });
  },
});
