/**
 * The leases of the claims a dispatcher is sending, renewed every lease/3 like the lock. A pace
 * wait or a slow vendor can outlast one lease, and an expired lease is claimed again and sent
 * twice without any crash. A broker consumer also reports progress on each claim's delivery at
 * each renewal (`keepWhile`'s `onRenew`), so the broker does not redeliver it meanwhile.
 */
import type { Logger } from 'pino';
import type { Clock } from '../limiter/index.js';
import type { DeliveryMessages } from './ports.js';

export interface ClaimLeasesOptions {
  /** The partition's name (`sms:0`), for the log. */
  partition: string;
  messages: Pick<DeliveryMessages, 'extendLeases'>;
  clock: Clock;
  logger: Logger;
  leaseMs: number;
  /** Between two renewals; default lease/3. */
  renewEveryMs?: number;
}

export class ClaimLeases {
  /** The claims being sent: id → fencing token (the claim's attempt number). */
  private readonly sending = new Map<string, number>();
  /** What else each claim renews (its broker delivery's progress report). */
  private readonly alsoRenew = new Map<string, () => void>();
  private timer: NodeJS.Timeout | undefined;
  /** A renewal in progress: the next one waits for it (a slow database must not stack them). */
  private renewing = false;

  constructor(private readonly options: ClaimLeasesOptions) {}

  start(): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.options.renewEveryMs ?? this.options.leaseMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Runs `send` with the lease of `claim` renewed (and `onRenew` called at each renewal) until it settles. */
  keepWhile<T>(claim: { id: string; attempts: number }, send: () => Promise<T>, onRenew?: () => void): Promise<T> {
    this.sending.set(claim.id, claim.attempts);
    if (onRenew) this.alsoRenew.set(claim.id, onRenew);
    return send().finally(() => {
      // Only this claim's entry: a later claim of the same message may have replaced it.
      if (this.sending.get(claim.id) === claim.attempts) {
        this.sending.delete(claim.id);
        this.alsoRenew.delete(claim.id);
      }
    });
  }

  /** Extends the leases of the claims being sent. A failure is logged; the next renewal tries again. */
  private async renew(): Promise<void> {
    for (const renew of this.alsoRenew.values()) renew();
    if (this.sending.size === 0 || this.renewing) return;
    this.renewing = true;
    const claims = [...this.sending].map(([id, attempt]) => ({ id, attempt }));
    try {
      await this.options.messages.extendLeases(claims, { now: this.options.clock.now(), leaseMs: this.options.leaseMs });
    } catch (error) {
      this.options.logger.warn(
        { err: error, partition: this.options.partition, claims: claims.length },
        'renewing the leases of sends in flight failed',
      );
    } finally {
      this.renewing = false;
    }
  }
}
