/**
 * Name resolution for hosts a tenant controls (its webhook endpoints, its own providers' hosts),
 * bounded so that no tenant's DNS can slow another's sends.
 *
 * - **No thread pool.** `dns.lookup` (getaddrinfo) runs on libuv's thread pool (4 threads), which
 *   file access, crypto and every other `dns.lookup` share: a name whose DNS never answers holds a
 *   thread for the system resolver's whole timeout, and a few such names stall every send of the
 *   process. Here names go through c-ares (`dns.Resolver`: A and AAAA queries on the event loop).
 *   c-ares does not read /etc/hosts: IP literals are answered as themselves and `localhost` (with
 *   `*.localhost`) as loopback, by RFC 6761; any other name is asked of DNS.
 * - **Bounded time.** A lookup gives up after `timeoutMs`, waiting for its turn included.
 * - **Bounded share.** Lookups of one name share one query (a webhook endpoint's posts in flight
 *   ask once); an owner (a tenant) has at most `perOwner` names being asked at once, and its other
 *   lookups wait their turn (within their `timeoutMs`) without touching anyone else's.
 * - **Cached.** An answer is reused for its TTL, at most `maxTtlMs`; failures are not cached.
 */
import { Resolver } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { fixedLookup } from '../core/webhook-urls.js';
import type { Clock } from '../limiter/index.js';

export interface HostResolverOptions {
  /** DNS servers, `ip` or `ip:port` (`[ipv6]:port`); empty: the system's (c-ares reads /etc/resolv.conf). */
  servers: readonly string[];
  /** The longest a lookup takes, waiting for its turn included. */
  timeoutMs: number;
  /** Names one owner may have asked at once. */
  perOwner: number;
  clock: Clock;
  /** Names whose answers are kept; the oldest goes first. Default 10 000. */
  maxEntries?: number;
  /** The longest an answer is reused, whatever its TTL. Default 60 s. */
  maxTtlMs?: number;
}

/** Why a name gave no address: `ETIMEOUT` (no answer in time), `ENOTFOUND` (no such name or no address), or c-ares's code. */
export class HostLookupError extends Error {
  override name = 'HostLookupError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

interface Answer {
  addresses: string[];
  /** Seconds, the least of the records'. */
  ttl: number;
}

const LOCALHOST = ['127.0.0.1', '::1'];
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND', 'NOTFOUND', 'NODATA']);

export class HostResolver {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { addresses: string[]; expiresAt: number }>();
  /** Names being asked: every lookup of one name shares its query. */
  private readonly asking = new Map<string, Promise<string[]>>();
  /** Per owner: names being asked, and the lookups waiting for a turn. */
  private readonly owners = new Map<string, { active: number; waiting: (() => void)[] }>();
  private closed = false;

  constructor(private readonly options: HostResolverOptions) {
    // c-ares retries once per round (its waits grow per try); `ask` starts rounds until the bound.
    this.resolver = new Resolver({ timeout: Math.max(50, Math.ceil(options.timeoutMs / 4)), tries: 2 });
    if (options.servers.length > 0) this.resolver.setServers([...options.servers]);
  }

  /** The addresses of `host` (an IP literal is its own), for `owner`; rejects with a {@link HostLookupError}. */
  async resolve(host: string, owner: string): Promise<string[]> {
    const name = host.replace(/^\[|\]$/g, '').toLowerCase();
    if (isIP(name)) return [name];
    if (name === 'localhost' || name.endsWith('.localhost')) return LOCALHOST;
    if (this.closed) throw new HostLookupError(`${name}: the resolver is closed`, 'ECANCELLED');
    const cached = this.cache.get(name);
    if (cached && cached.expiresAt > this.options.clock.now()) return cached.addresses;
    return this.asking.get(name) ?? this.ask(name, owner);
  }

  /**
   * A connection's `lookup` (net, http) resolving through {@link resolve} for `owner`: a client
   * handed this never calls `dns.lookup`.
   */
  lookupFor(owner: string): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname, owner).then(
        (addresses) => fixedLookup(addresses)(hostname, options, callback),
        (error: HostLookupError) => callback(error, '', 0),
      );
    };
  }

  /** Cancels the queries in flight (they reject) and refuses new ones. */
  close(): void {
    this.closed = true;
    this.resolver.cancel();
  }

  /**
   * Waits for a turn of `owner`, asks, and gives the turn back; lookups of the name meanwhile join
   * this one. The deadline counts from here, the wait included, and gives the turn back too: a
   * query c-ares has not yet given up holds no turn.
   */
  private ask(name: string, owner: string): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        reject(this.timedOut(name));
      }, this.options.timeoutMs);
      timer.unref();
    });
    // c-ares shortens its waits as it learns a server's latency, and may give up on a name well
    // before the bound: the name is asked again until it answers or the bound passes, so the
    // bound is what a lookup costs, whatever c-ares has learnt.
    const queryUntilExpired = async (): Promise<Answer> => {
      for (;;) {
        try {
          return await this.query(name);
        } catch (error) {
          if ((error as HostLookupError).code !== 'ETIMEOUT' || expired || this.closed) throw error;
        }
      }
    };
    const asking = this.turn(owner, deadline)
      .then(async (release) => {
        try {
          const answer = await Promise.race([queryUntilExpired(), deadline]);
          this.remember(name, answer);
          return answer.addresses;
        } finally {
          release();
        }
      })
      .finally(() => {
        clearTimeout(timer);
        if (this.asking.get(name) === asking) this.asking.delete(name);
      });
    this.asking.set(name, asking);
    return asking;
  }

  /** A and AAAA at once; the name's addresses are whatever either gave. */
  private async query(name: string): Promise<Answer> {
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })]);
    const records = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (records.length > 0)
      return { addresses: records.map((record) => record.address), ttl: Math.min(...records.map((record) => record.ttl)) };
    const codes = [v4, v6].map((result) => (result.status === 'rejected' ? String((result.reason as { code?: string }).code) : 'ENODATA'));
    const code = codes.find((each) => !NO_ADDRESS.has(each));
    if (code === undefined) throw new HostLookupError(`${name} does not resolve (no address)`, 'ENOTFOUND');
    if (code === 'ETIMEOUT') throw this.timedOut(name);
    throw new HostLookupError(`${name} does not resolve (${code})`, code);
  }

  private remember(name: string, answer: Answer): void {
    const ttlMs = Math.min(answer.ttl * 1000, this.options.maxTtlMs ?? 60_000);
    if (ttlMs <= 0) return;
    this.cache.delete(name);
    this.cache.set(name, { addresses: answer.addresses, expiresAt: this.options.clock.now() + ttlMs });
    const max = this.options.maxEntries ?? 10_000;
    for (const oldest of this.cache.keys()) {
      if (this.cache.size <= max) break;
      this.cache.delete(oldest);
    }
  }

  /**
   * Resolves with the release of a turn once `owner` has fewer than `perOwner` names being asked;
   * rejects (and leaves the queue) when `deadline` does first.
   */
  private turn(owner: string, deadline: Promise<never>): Promise<() => void> {
    let state = this.owners.get(owner);
    if (!state) {
      state = { active: 0, waiting: [] };
      this.owners.set(owner, state);
    }
    const held = state;
    const release = () => {
      const next = held.waiting.shift();
      // The turn passes from the releasing lookup to the next waiting one: `active` stays.
      if (next) next();
      else if (--held.active === 0) this.owners.delete(owner);
    };
    if (held.active < this.options.perOwner) {
      held.active++;
      return Promise.resolve(release);
    }
    return new Promise<() => void>((resolve, reject) => {
      const next = () => resolve(release);
      held.waiting.push(next);
      deadline.catch((error: unknown) => {
        const at = held.waiting.indexOf(next);
        if (at < 0) return;
        held.waiting.splice(at, 1);
        reject(error);
      });
    });
  }

  private timedOut(name: string): HostLookupError {
    return new HostLookupError(`${name}: no DNS answer within ${this.options.timeoutMs} ms`, 'ETIMEOUT');
  }
}
