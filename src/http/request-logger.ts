/**
 * Each request's logger, made at its first line. Fastify gives every request a child of the
 * server's logger carrying its id; pino builds a child with its bindings and `setLevel` (about
 * 2 % of a send's CPU), and most requests never log a line (5xx, and debug only).
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type Line = (...args: unknown[]) => void;

/** The logger pino would make, deferred: the same bindings and options, built at first use. */
class LazyChildLogger {
  private built: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    this.built ??= this.parent.child(this.bindings, this.options);
    return this.built;
  }

  get level(): string {
    return this.real.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.real.fatal as Line)(...args);
  }
  error(...args: unknown[]): void {
    (this.real.error as Line)(...args);
  }
  warn(...args: unknown[]): void {
    (this.real.warn as Line)(...args);
  }
  info(...args: unknown[]): void {
    (this.real.info as Line)(...args);
  }
  debug(...args: unknown[]): void {
    (this.real.debug as Line)(...args);
  }
  trace(...args: unknown[]): void {
    (this.real.trace as Line)(...args);
  }
  silent(...args: unknown[]): void {
    (this.real.silent as Line)(...args);
  }
  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a request's child of the server's logger, built when first used. */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (parent, bindings, options) =>
  new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
