import { type AddressInfo, createServer, type LookupFunction, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedLookup } from '../../src/core/webhook-urls.js';
import type { OutboundMessage, Provider, ProviderError } from '../../src/providers/provider.js';
import { createSmtpProvider } from '../../src/providers/smtp.js';
import { rejectionOf } from './local-http-server.js';

const USER = 'relay-user';
const PASSWORD = 'relay-password-123';

interface Received {
  session: { user: unknown; secure: boolean; from: string; to: string[] };
  raw: string;
}

/** An SMTP error the way smtp-server sends it: the responseCode becomes the reply code. */
const reply = (code: number, text: string): Error => Object.assign(new Error(text), { responseCode: code });

describe('SMTP provider against a local smtp-server (auth required, STARTTLS)', () => {
  let server: SMTPServer;
  let port: number;
  const received: Received[] = [];
  const providers: Provider[] = [];

  const provider = (overrides: { password?: string; port?: number; host?: string; lookup?: LookupFunction } = {}): Provider => {
    const created = createSmtpProvider({
      id: 'smtp-main',
      channel: 'email',
      host: overrides.host ?? '127.0.0.1',
      lookup: overrides.lookup,
      port: overrides.port ?? port,
      secure: false,
      requireTLS: true,
      tlsRejectUnauthorized: false, // smtp-server's built-in self-signed certificate
      from: '"Sluice" <noreply@mail.example.com>',
      auth: { user: USER, pass: overrides.password ?? PASSWORD },
      maxConnections: 1,
      timeoutMs: 5_000,
    });
    providers.push(created);
    return created;
  };

  const message: OutboundMessage = {
    id: 'msg-0001',
    tenantId: 't1',
    channel: 'email',
    to: 'alice@example.com',
    subject: 'Your code',
    body: 'Your code is 123456.',
    html: '<p>Your code is <b>123456</b>.</p>',
  };

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: false,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, callback) {
        if (auth.username === USER && auth.password === PASSWORD) return callback(null, { user: auth.username });
        return callback(reply(535, 'Authentication credentials invalid'));
      },
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('busy')) return callback(reply(450, `Mailbox ${address.address} busy, try later`));
        if (address.address.startsWith('nobody')) return callback(reply(550, `No such user ${address.address}`));
        return callback();
      },
      onData(stream, session: SMTPServerSession, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          if (/^Subject: defer/m.test(raw)) return callback(reply(451, 'Local processing error, try again'));
          if (/^Subject: reject/m.test(raw)) return callback(reply(554, 'Message rejected as spam'));
          received.push({
            session: {
              user: session.user,
              secure: session.secure,
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
            },
            raw,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await Promise.all(providers.map((p) => p.close?.()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends over STARTTLS with AUTH, a Message-ID from the sluice id, and text + HTML parts', async () => {
    const result = await provider().send(message);
    expect(result).toEqual({ providerMessageId: '<sluice-msg-0001@mail.example.com>' });

    const mail = received.at(-1)!;
    expect(mail.session).toEqual({ user: USER, secure: true, from: 'noreply@mail.example.com', to: ['alice@example.com'] });
    const [head = '', ...rest] = mail.raw.split('\r\n\r\n');
    const body = rest.join('\r\n\r\n');
    expect(head).toMatch(/^Message-ID: <sluice-msg-0001@mail\.example\.com>$/m);
    expect(head).toMatch(/^From: "?Sluice"? <noreply@mail\.example\.com>$/m);
    expect(head).toMatch(/^To: alice@example\.com$/m);
    expect(head).toMatch(/^Subject: Your code$/m);
    expect(head).toMatch(/^X-Sluice-Message-Id: msg-0001$/im);
    const boundary = /^Content-Type: multipart\/alternative;\s*boundary="([^"]+)"/im.exec(head)?.[1];
    expect(boundary).toBeTruthy();
    const parts = body.split(`--${boundary}`).slice(1, -1);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatch(/^Content-Type: text\/plain/im);
    expect(parts[0]).toContain('Your code is 123456.');
    expect(parts[1]).toMatch(/^Content-Type: text\/html/im);
    expect(parts[1]).toContain('<p>Your code is <b>123456</b>.</p>');
  });

  it("with a lookup, connects where it answers (nodemailer never resolves the relay's name), and retries when it fails", async () => {
    const asked: string[] = [];
    const answers = fixedLookup(['127.0.0.1']);
    const lookup: LookupFunction = (hostname, options, callback) => {
      asked.push(hostname);
      answers(hostname, options, callback);
    };
    // A name no resolver knows: only the lookup can find the relay.
    await provider({ host: 'relay.sluice.invalid', lookup }).send({ ...message, id: 'msg-lookup' });
    expect(asked).toEqual(['relay.sluice.invalid']);
    expect(received.at(-1)!.session.secure).toBe(true);
    const failing: LookupFunction = (_hostname, _options, callback) =>
      callback(Object.assign(new Error('relay.sluice.invalid: no DNS answer within 5000 ms'), { code: 'ETIMEOUT' }), '', 0);
    const error = (await rejectionOf(provider({ host: 'relay.sluice.invalid', lookup: failing }).send(message))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['NETWORK', true]);
  });

  it('keeps the same Message-ID when the same message is sent again (a retry)', async () => {
    const smtp = provider();
    const first = await smtp.send({ ...message, id: 'msg-retry' });
    const second = await smtp.send({ ...message, id: 'msg-retry' });
    expect(first).toEqual(second);
    const ids = received.slice(-2).map((m) => /^Message-ID: (.*)$/m.exec(m.raw)?.[1]);
    expect(ids).toEqual(['<sluice-msg-retry@mail.example.com>', '<sluice-msg-retry@mail.example.com>']);
  });

  it('fails permanently with 535 on a wrong password', async () => {
    const error = (await rejectionOf(provider({ password: 'wrong' }).send(message))) as ProviderError;
    expect([error.code, error.status, error.retryable, error.providerFault]).toEqual(['SMTP_535', 535, false, true]);
    expect(error.message).not.toContain('wrong');
    expect(error.message).not.toContain(PASSWORD);
  });

  it('retries a 4xx reply to RCPT TO and masks the recipient', async () => {
    const error = (await rejectionOf(provider().send({ ...message, to: 'busy@example.com' }))) as ProviderError;
    expect([error.code, error.retryable]).toEqual(['SMTP_450', true]);
    expect(error.message).toContain('b***@example.com');
    expect(error.message).not.toContain('busy@example.com');
  });

  it('fails permanently on a 5xx reply to RCPT TO', async () => {
    const error = (await rejectionOf(provider().send({ ...message, to: 'nobody@example.com' }))) as ProviderError;
    expect([error.code, error.retryable, error.providerFault]).toEqual(['SMTP_550', false, false]);
    expect(error.message).not.toContain('nobody@example.com');
  });

  it('retries a 451 after DATA and gives up on a 554', async () => {
    const deferred = (await rejectionOf(provider().send({ ...message, subject: 'defer me' }))) as ProviderError;
    expect([deferred.code, deferred.retryable]).toEqual(['SMTP_451', true]);
    const rejected = (await rejectionOf(provider().send({ ...message, subject: 'reject me' }))) as ProviderError;
    expect([rejected.code, rejected.retryable]).toEqual(['SMTP_554', false]);
  });

  it('retries when the relay cannot be reached', async () => {
    const closed = new SMTPServer({ logger: false });
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const deadPort = (closed.server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = (await rejectionOf(provider({ port: deadPort }).send(message))) as ProviderError;
    expect(error.retryable).toBe(true);
    expect(error.code).toBe('NETWORK');
  });

  it('retries a relay that accepts the connection but never greets (timeout)', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    const smtp = createSmtpProvider({
      id: 'smtp-silent',
      channel: 'email',
      host: '127.0.0.1',
      port: silentPort,
      secure: false,
      from: 'a@b.example',
      timeoutMs: 300,
    });
    try {
      const error = (await rejectionOf(smtp.send(message))) as ProviderError;
      expect(error.retryable).toBe(true);
      expect(['TIMEOUT', 'NETWORK']).toContain(error.code);
    } finally {
      await smtp.close?.();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('with credentials, never logs in on a connection without TLS unless told to (requireTLS: false)', async () => {
    const logins: string[] = [];
    const plain = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authOptional: false,
      logger: false,
      onAuth(auth, _session, callback) {
        logins.push(String(auth.password));
        callback(null, { user: auth.username });
      },
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => callback());
      },
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const plainPort = (plain.server.address() as AddressInfo).port;
    const options = {
      channel: 'email' as const,
      host: '127.0.0.1',
      port: plainPort,
      secure: false,
      from: 'a@b.example',
      auth: { user: USER, pass: PASSWORD },
      timeoutMs: 5_000,
    };
    const strict = createSmtpProvider({ id: 'smtp-default', ...options });
    const trusting = createSmtpProvider({ id: 'smtp-trusted-network', ...options, requireTLS: false });
    try {
      const error = (await rejectionOf(strict.send(message))) as ProviderError;
      // A fault of this relay, not of the message: the channel's next provider gets it.
      expect([error.name, error.retryable, error.providerFault]).toEqual(['ProviderError', false, true]);
      expect(logins).toEqual([]);
      await trusting.send(message);
      expect(logins).toEqual([PASSWORD]);
    } finally {
      await strict.close?.();
      await trusting.close?.();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});
