/**
 * What the broker suites share: adapter options with a prefix of the test's own (so suites can
 * share one nats-server), an observer that records, an inbox of deliveries the test settles
 * itself, and a JetStream manager to look at the server (or play the operator).
 */
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createJetStreamBroker, type JetStreamBroker, type JetStreamBrokerOptions } from '../../src/broker/jetstream.js';
import type { BrokerDelivery, BrokerObserver, DueJob } from '../../src/broker/port.js';

let counter = 0;

/** A prefix no other suite or run uses: the streams are `<PREFIX>_DELIVER` and `<PREFIX>_EVENTS`. */
export function uniquePrefix(): string {
  return `t${process.pid}x${Date.now().toString(36)}x${counter++}`;
}

export function brokerOptions(url: string, overrides: Partial<JetStreamBrokerOptions> = {}): JetStreamBrokerOptions {
  return {
    servers: [url],
    name: 'sluice-test',
    prefix: uniquePrefix(),
    replicas: 1,
    ackWaitMs: 30_000,
    maxDeliver: 5,
    maxAckPending: 1000,
    maxNakDelayMs: 60_000,
    duplicateWindowMs: 120_000,
    deliverMaxAgeMs: 3_600_000,
    eventsMaxAgeMs: 3_600_000,
    eventsMaxBytes: 16 * 1024 * 1024,
    requestTimeoutMs: 2000,
    publishTryMs: 1000,
    publishDeadlineMs: 10_000,
    // Heartbeats every second: a pull whose consumer vanished notices within ~2 s.
    pullExpiresMs: 2000,
    pullHeartbeatMs: 500,
    ...overrides,
  };
}

/** Every observer call, in order, as `[name, ...arguments]`. */
export class Recorder {
  readonly calls: [string, ...unknown[]][] = [];
  readonly observer: BrokerObserver = new Proxy(
    {},
    {
      get:
        (_target, name: string) =>
        (...args: unknown[]) =>
          this.calls.push([name, ...args]),
    },
  );

  of(name: string): unknown[][] {
    return this.calls.filter(([call]) => call === name).map(([, ...args]) => args);
  }
}

/** Deliveries as they arrive; the test settles each (the handler returns once it is settled). */
export class Inbox {
  private readonly arrived: BrokerDelivery[] = [];
  private waiting: (() => void) | undefined;
  private readonly holding = new Set<() => void>();
  /** Every delivery ever received, settled or not. */
  readonly all: BrokerDelivery[] = [];

  readonly handler = async (delivery: BrokerDelivery): Promise<void> => {
    let settled!: () => void;
    const done = new Promise<void>((resolve) => {
      settled = resolve;
    });
    this.holding.add(settled);
    const wrap =
      <A extends unknown[]>(call: (...args: A) => Promise<void>) =>
      async (...args: A) => {
        try {
          await call(...args);
        } finally {
          settled();
        }
      };
    const held: BrokerDelivery = {
      job: delivery.job,
      deliveryCount: delivery.deliveryCount,
      final: delivery.final,
      ack: wrap(() => delivery.ack()),
      nak: async (delayMs) => {
        // A refused delay settles nothing: the test goes on holding the delivery.
        await delivery.nak(delayMs);
        settled();
      },
      term: wrap((reason: string) => delivery.term(reason)),
      working: () => delivery.working(),
    };
    this.all.push(held);
    this.arrived.push(held);
    this.waiting?.();
    await done;
    this.holding.delete(settled);
  };

  /** Lets every handler still holding a delivery return (unsettled: the adapter naks it), so a broker can close. */
  release(): void {
    for (const settled of this.holding) settled();
    this.holding.clear();
  }

  /** The next delivery, waiting up to `timeoutMs` for it. */
  async next(timeoutMs = 15_000): Promise<BrokerDelivery> {
    const deadline = Date.now() + timeoutMs;
    while (this.arrived.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no delivery within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.arrived.shift()!;
  }

  get pending(): number {
    return this.arrived.length;
  }
}

let sequence = 0;

export function dueJob(overrides: Partial<DueJob> = {}): DueJob {
  sequence++;
  return {
    messageId: `01TESTMSG${String(sequence).padStart(8, '0')}${process.pid}`,
    tenantId: '01TESTTENANT',
    channel: 'sms',
    partition: 0,
    attempt: 1,
    dueAt: 1_764_000_000_000,
    handedOffAt: 1_764_000_000_100,
    priority: 'transactional',
    ...overrides,
  };
}

/** A manager on its own connection: what an operator (or the test) sees and does. */
export async function operator(url: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager; close(): Promise<void> }> {
  const nc = await connect({ servers: url });
  const jsm = await jetstreamManager(nc);
  return { nc, jsm, close: () => nc.close() };
}

/** Brokers made by a suite, closed (and their streams deleted) in afterAll. */
export class Brokers {
  private readonly made: JetStreamBroker[] = [];

  create(options: JetStreamBrokerOptions): JetStreamBroker {
    const broker = createJetStreamBroker(options);
    this.made.push(broker);
    return broker;
  }

  async closeAll(url?: string): Promise<void> {
    await Promise.all(this.made.map((broker) => broker.close()));
    if (!url) return;
    const { jsm, close } = await operator(url);
    for (const broker of this.made) {
      for (const stream of [broker.names.deliverStream, broker.names.eventsStream]) await jsm.streams.delete(stream).catch(() => false);
    }
    await close();
  }
}

/** Polls `condition` every 25 ms until it holds, or fails after `timeoutMs` (a bound on waiting for an event, not a timing assertion). */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 15_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Waits until the broker is connected and its stream is there (both are made in the background). */
export async function connected(broker: JetStreamBroker): Promise<void> {
  await until(async () => (await broker.health()).ok, 15_000, `a connection to ${broker.servers}`);
}
