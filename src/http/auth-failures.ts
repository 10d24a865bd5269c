/**
 * The failure limit on authentication (`SLUICE_AUTH_FAILURE_LIMIT`): wrong API keys and admin
 * tokens counted per client address in a sliding log of the limiter (Redis when configured, so
 * every instance counts into one log; else a capped MemoryStore). Only failures are recorded; an
 * address whose log is full is answered before its credential is checked, from a list kept in
 * process, so a request costs no store call unless its credential was wrong.
 */
import { embeddedIpv4, ipv6Bytes } from '../core/internal-addresses.js';
import { type Clock, Limiter, MemoryStore, type Rule } from '../limiter/index.js';
import type { AuthFailureLimit } from './deps.js';

/** Addresses counted in process (embedded mode) and held blocked in process, each at most. */
export const AUTH_ADDRESSES_MAX = 100_000;

export interface AddressFailureLimitOptions {
  /** Wrong credentials one address may present within `windowMs`. */
  limit: number;
  windowMs: number;
  clock: Clock;
  /** Where failures are counted: a limiter shared by the instances (Redis); default one over its own capped MemoryStore. */
  limiter?: Pick<Limiter, 'check' | 'peek'>;
  /** A failure the store could not count (it is then not counted: the caller still gets its 401). */
  onStoreError?: (error: unknown) => void;
  /** Addresses counted in process and held blocked, each at most; default {@link AUTH_ADDRESSES_MAX}. */
  maxAddresses?: number;
}

/**
 * The key an address is counted under: an IPv4 address as it is, also in any of its IPv6 forms
 * (mapped `::ffff:198.51.100.7` and `::ffff:c633:6407` however spelt, compatible, translated,
 * NAT64, 6to4, Teredo's client: {@link embeddedIpv4}), which would otherwise put every IPv4 host
 * in one /64 or give one host a /64 per spelling; an IPv6 address by its /64, which one
 * subscriber or host holds whole.
 */
export function addressKey(address: string): string {
  const bytes = ipv6Bytes(address);
  if (!bytes) return address;
  const carried = embeddedIpv4(bytes).at(-1);
  // `::` and `::1` read as 0.0.0.0 and 0.0.0.1: no IPv4 host sends from 0.0.0.0/8.
  if (carried !== undefined && !carried.startsWith('0.')) return carried;
  const groups = [0, 2, 4, 6].map((at) => ((bytes[at]! << 8) | bytes[at + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}

export class AddressFailureLimit implements AuthFailureLimit {
  private readonly limiter: Pick<Limiter, 'check' | 'peek'>;
  /** The rule set, one array for the limiter's normalisation cache. */
  private readonly rules: readonly Rule[];
  /** Address key → clock time its block ends; oldest first, at most `maxAddresses`. */
  private readonly blocked = new Map<string, number>();
  /** Failures of an address handed to the store and not yet answered (with Redis, a round trip). */
  private readonly counting = new Map<string, number>();
  private readonly maxAddresses: number;
  private readonly memory: MemoryStore | undefined;

  constructor(private readonly options: AddressFailureLimitOptions) {
    if (!(options.limit >= 1)) throw new RangeError('limit must be at least 1');
    this.rules = [{ windowMs: options.windowMs, limit: options.limit }];
    this.maxAddresses = options.maxAddresses ?? AUTH_ADDRESSES_MAX;
    if (options.limiter) this.limiter = options.limiter;
    else {
      this.memory = new MemoryStore({ clock: options.clock, maxSubjects: this.maxAddresses });
      this.limiter = new Limiter({ store: this.memory });
    }
  }

  /** Addresses held in process: counted (without Redis) and blocked. */
  get addresses(): { counted: number; blocked: number } {
    return { counted: this.memory?.size ?? 0, blocked: this.blocked.size };
  }

  blockedFor(address: string): number {
    // Nothing blocked or being counted: no address needs its key (asked on every request).
    if (this.blocked.size === 0 && this.counting.size === 0) return 0;
    const key = addressKey(address);
    const until = this.blocked.get(key);
    if (until !== undefined) {
      const left = until - this.options.clock.now();
      if (left > 0) return left;
      this.blocked.delete(key);
    }
    // A burst of failures still on their way to the store counts already (their end is unknown:
    // a window from now bounds it).
    return (this.counting.get(key) ?? 0) >= this.options.limit ? this.options.windowMs : 0;
  }

  async failed(address: string): Promise<void> {
    const key = addressKey(address);
    const subject = `auth:${key}`;
    this.counting.set(key, (this.counting.get(key) ?? 0) + 1);
    try {
      const decision = await this.limiter.check({ subject, rules: this.rules });
      if (!decision.allowed) this.block(key, decision.retryAfterMs);
      // This failure filled the window: the next attempt waits for its oldest failure to leave.
      else if (decision.counts[0]! + 1 >= this.options.limit)
        this.block(key, (await this.limiter.peek({ subject, rules: this.rules })).retryAfterMs);
    } catch (error) {
      this.options.onStoreError?.(error);
    } finally {
      const left = (this.counting.get(key) ?? 1) - 1;
      if (left === 0) this.counting.delete(key);
      else this.counting.set(key, left);
    }
  }

  private block(key: string, ms: number): void {
    if (ms <= 0) return;
    this.blocked.delete(key);
    this.blocked.set(key, this.options.clock.now() + ms);
    if (this.blocked.size > this.maxAddresses) this.blocked.delete(this.blocked.keys().next().value!);
  }
}
