/**
 * The broker unit's pieces that need no server: a due job's wire form, the credentials file, the
 * connection options, the JetStream resources' configuration.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TimeoutError } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import {
  authenticatorOf,
  BrokerCredentialsError,
  connectionOptions,
  fileAuthenticator,
  serverAtLeast,
} from '../../src/broker/connection.js';
import { decodeDueJob, encodeDueJob } from '../../src/broker/due-job.js';
import { backoffMs, consumerConfig, JetStreamNames } from '../../src/broker/jetstream-resources.js';
import { isLeaderGap, jitteredPauseMs } from '../../src/broker/leader-change.js';
import { BrokerUnavailableError } from '../../src/broker/port.js';
import { brokerRetryMs } from '../../src/delivery/hand-off.js';
import { dueJob } from './support.js';

describe('due job wire form', () => {
  it('round-trips, and a newer version with more fields is still read', () => {
    const job = dueJob({ channel: 'email', partition: 7, attempt: 3 });
    expect(decodeDueJob(encodeDueJob(job), 'email')).toEqual(job);
    const newer = JSON.stringify({ ...JSON.parse(encodeDueJob(job)), v: 2, priority: 'high' });
    expect(decodeDueJob(newer, 'email')).toEqual(job);
  });

  it('names what is wrong with a payload that is no job for this consumer', () => {
    const job = dueJob({ channel: 'sms' });
    expect(decodeDueJob('not json', 'sms')).toEqual({ problem: 'payload is not JSON' });
    expect(decodeDueJob(encodeDueJob(job), 'email')).toEqual({ problem: 'a sms job on the email consumer' });
    expect(decodeDueJob(JSON.stringify({ ...job }), 'sms')).toEqual({ problem: 'unknown version undefined' });
    expect(decodeDueJob(JSON.stringify({ ...job, v: 1, attempt: 'x' }), 'sms')).toEqual({
      problem: 'attempt must be an integer ≥ 0 (got x)',
    });
  });
});

describe('broker credentials file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-broker-wire-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is a user and password, or a token, in JSON; anything else is refused without quoting it', () => {
    expect(authenticatorOf(Buffer.from('{"user":"u","password":"p"}'), 'f')()).toEqual({ user: 'u', pass: 'p' });
    expect(authenticatorOf(Buffer.from('{"token":"s3cret-token"}'), 'f')()).toEqual({ auth_token: 's3cret-token' });
    for (const content of ['password=s3cret-token', '{"password":"s3cret-token"}', '"s3cret-token"']) {
      let thrown: unknown;
      try {
        authenticatorOf(Buffer.from(content), '/etc/sluice/broker.json');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(BrokerCredentialsError);
      expect(String(thrown)).toContain('/etc/sluice/broker.json must be a NATS .creds file or JSON');
      expect(String(thrown)).not.toContain('s3cret');
    }
  });

  it('is read again at every connect (rotated in place); a missing file fails the start, naming it', () => {
    const file = join(dir, 'broker.json');
    writeFileSync(file, '{"user":"first","password":"p1"}');
    const authenticator = fileAuthenticator(file);
    expect(authenticator()).toEqual({ user: 'first', pass: 'p1' });
    writeFileSync(file, '{"user":"second","password":"p2"}');
    expect(authenticator()).toEqual({ user: 'second', pass: 'p2' });
    expect(() => fileAuthenticator(join(dir, 'missing.json'))).toThrow(
      `cannot read the broker credentials file ${join(dir, 'missing.json')}: ENOENT`,
    );
  });
});

describe('connection options', () => {
  it('reconnect for ever, TLS for tls:// servers, and refuse what the setting refuses', () => {
    const plain = connectionOptions({ servers: ['nats://a:4222', 'nats://b:4222'], name: 'n', timeoutMs: 100 });
    expect(plain).toMatchObject({ servers: ['nats://a:4222', 'nats://b:4222'], maxReconnectAttempts: -1, tls: undefined });
    expect(connectionOptions({ servers: ['tls://a:4222'], name: 'n', timeoutMs: 100 }).tls).toEqual({});
    expect(() => connectionOptions({ servers: ['nats://u:p@a:4222'], name: 'n', timeoutMs: 100 })).toThrow(/holds credentials/);
    expect(() => connectionOptions({ servers: [], name: 'n', timeoutMs: 100 })).toThrow(/no broker server/);
  });

  it('knows which servers keep a term reason (2.11 and later)', () => {
    expect(serverAtLeast('2.9.10', 2, 11)).toBe(false);
    expect(serverAtLeast('2.10.3', 2, 11)).toBe(false);
    expect(serverAtLeast('2.11.0', 2, 11)).toBe(true);
    expect(serverAtLeast('3.0.0', 2, 11)).toBe(true);
    expect(serverAtLeast(undefined, 2, 11)).toBe(false);
  });
});

describe('JetStream resources', () => {
  it('name streams, subjects and consumers from the prefix; back off ack wait × 1, 2, 4, 8, 16, fewer than max deliver', () => {
    const names = new JetStreamNames('sluice-prod');
    expect([names.deliverStream, names.eventsStream]).toEqual(['SLUICE_PROD_DELIVER', 'SLUICE_PROD_EVENTS']);
    expect(names.deliverSubject('sms', 3)).toBe('sluice-prod.deliver.sms.3');
    expect(names.eventSubject('01T', 'message.sent')).toBe('sluice-prod.events.01T.message.sent');
    expect(backoffMs({ ackWaitMs: 1000, maxDeliver: 20 })).toEqual([1000, 2000, 4000, 8000, 16_000]);
    expect(backoffMs({ ackWaitMs: 1000, maxDeliver: 3 })).toEqual([1000, 2000]);
    const settings = {
      prefix: 'sluice-prod',
      replicas: 1,
      ackWaitMs: 1000,
      maxDeliver: 2,
      maxAckPending: 10,
      duplicateWindowMs: 1,
      deliverMaxAgeMs: 1,
      eventsMaxAgeMs: 1,
      eventsMaxBytes: 1,
    };
    // One step: no list, the ack wait alone.
    expect(consumerConfig(names, 'sms', settings)).toMatchObject({
      ack_wait: 1e9,
      backoff: undefined,
      filter_subject: 'sluice-prod.deliver.sms.>',
    });
  });
});

describe('riding out a leader change', () => {
  it('tries again after a jittered pause that grows to 500 ms, on a timeout only; a failed hand-off ticks again within 100–500 ms', () => {
    expect([0, 1, 2, 5, 20].map((n) => jitteredPauseMs(n, () => 1))).toEqual([50, 100, 200, 500, 500]);
    expect(jitteredPauseMs(3, () => 0)).toBe(0);
    expect(isLeaderGap(new TimeoutError())).toBe(true);
    expect(isLeaderGap(new Error('x', { cause: new TimeoutError() }))).toBe(true);
    expect(isLeaderGap(new Error('permissions violation'))).toBe(false);
    expect(brokerRetryMs(new BrokerUnavailableError('away'), () => 0)).toBe(100);
    expect(brokerRetryMs(new BrokerUnavailableError('away'), () => 1)).toBe(500);
    expect(brokerRetryMs(new Error('database away'))).toBeUndefined();
  });
});
