/**
 * The change bus: tells every instance that a key changed (config cache entries, blacklists, due
 * wakes). Redis pub/sub when Redis is configured, an EventEmitter in the embedded default.
 */
import { EventEmitter } from 'node:events';

/** Tells every instance that a cached key changed. */
export interface ChangeBus {
  publish(key: string): Promise<void>;
  subscribe(listener: (key: string) => void): () => void;
  close(): Promise<void>;
}

/** The embedded default: one process, so an EventEmitter is the whole bus. */
export class InProcessChangeBus implements ChangeBus {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  async publish(key: string): Promise<void> {
    this.emitter.emit('change', key);
  }
  subscribe(listener: (key: string) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/**
 * Redis pub/sub. Subscribing needs a connection of its own (a subscribed connection can run
 * nothing else), made with `duplicate()`. A reconnect may have missed messages, so listeners are
 * told `'*'` (drop everything) whenever the subscriber has (re)subscribed.
 */
/** The part of an ioredis connection the subscriber uses (a `Redis`, or a `Cluster`'s duplicate). */
export interface BusSubscriber {
  on(event: 'error' | 'ready', listener: (error?: unknown) => void): unknown;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  readonly status: string;
}

/** The part of an ioredis `Redis` or `Cluster` the bus needs: publish, and a connection of its own to subscribe with. */
export interface BusClient {
  publish(channel: string, message: string): Promise<unknown>;
  duplicate(): BusSubscriber;
}

export class RedisChangeBus implements ChangeBus {
  private readonly listeners = new Set<(key: string) => void>();
  /** Made at the first subscribe: a process that only publishes (a CLI command) holds one connection. */
  private subscriber: BusSubscriber | undefined;
  private firstSubscription: () => void = () => {};
  private readonly ready = new Promise<void>((resolve) => {
    this.firstSubscription = resolve;
  });
  private closed = false;

  constructor(
    private readonly publisher: BusClient,
    private readonly channel = 'sluice:config',
  ) {}

  private listen(): void {
    const subscriber = this.publisher.duplicate();
    this.subscriber = subscriber;
    // Its connection errors are the main client's outage, reported there; without a listener
    // ioredis prints each one to stderr.
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, key: string) => this.emit(key));
    // Subscribed on every (re)connection, not once: a SUBSCRIBE sent while Redis is down is
    // rejected, and ioredis re-subscribes only what a reply confirmed, so a process started
    // before Redis would never hear anything. Subscribing again to the same channel is harmless.
    // Then '*': whatever was published meanwhile was missed.
    const subscribe = () => {
      subscriber.subscribe(this.channel).then(
        () => {
          this.firstSubscription();
          this.emit('*');
        },
        () => {
          // Refused on a live connection (a timeout while Redis is busy): again in a second, as
          // long as the connection lasts; a new connection subscribes on its own 'ready'.
          if (this.closed) return;
          setTimeout(() => {
            if (!this.closed && subscriber.status === 'ready') subscribe();
          }, 1000).unref();
        },
      );
    };
    subscriber.on('ready', subscribe);
  }

  private emit(key: string): void {
    for (const listener of this.listeners) listener(key);
  }

  async publish(key: string): Promise<void> {
    await this.publisher.publish(this.channel, key);
  }

  subscribe(listener: (key: string) => void): () => void {
    if (!this.subscriber && !this.closed) this.listen();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the subscription is active, after a first subscribe (tests wait for it before publishing). */
  whenReady(): Promise<unknown> {
    if (!this.subscriber && !this.closed) this.listen();
    return this.ready;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.subscriber?.disconnect();
  }
}
