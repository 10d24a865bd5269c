/**
 * A log line that may repeat many times a second during an outage (a Redis connection error, a
 * dispatcher tick failing on every tick, a due-index add failing on every batch), written at most
 * once per interval: the first at once, then one per interval carrying how many were held back
 * (`repeated`). One line per event buried the log in identical stacks while telling nothing new.
 */
import type { Clock } from '../limiter/index.js';

export class ThrottledLog<Fields extends object = Record<string, unknown>> {
  private held = 0;
  private lastLineAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly write: (fields: Fields & { repeated?: number }) => void,
    private readonly clock: Clock,
    private readonly intervalMs = 10_000,
  ) {}

  /** One occurrence: written if no line was written within the interval, else counted for the next line. */
  record(fields: Fields): void {
    const now = this.clock.now();
    if (now - this.lastLineAt < this.intervalMs) {
      this.held++;
      return;
    }
    this.write(this.held > 0 ? { ...fields, repeated: this.held } : fields);
    this.held = 0;
    this.lastLineAt = now;
  }
}
