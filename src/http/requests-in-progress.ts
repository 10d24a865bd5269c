/**
 * The requests an app is serving, for a shutdown that waits for them before it closes the
 * database and Redis. A request is in progress from its first hook until its reply is sent, and
 * that includes a request whose client hung up: its handler runs on (admitting a message, writing
 * it) and Fastify sends its reply to the closed socket when it is done. The server's own close
 * waits only for its sockets, which such a request no longer has.
 */
import type { FastifyInstance } from 'fastify';

export class RequestsInProgress {
  private readonly open = new Set<object>();
  private idleWaiters: (() => void)[] = [];
  private closing = false;

  /**
   * From now on every answer carries `Connection: close`, those of the requests already in
   * progress included: Node then ends each kept-alive connection as its request ends, instead of
   * keeping it for its keep-alive timeout (72 s) after the server has stopped listening.
   */
  beginClose(): void {
    this.closing = true;
  }

  /** Requests begun and not yet answered. */
  get size(): number {
    return this.open.size;
  }

  /** Tracks every request of `app` (register before its other hooks). */
  register(app: FastifyInstance): void {
    // Callback hooks: no promise per request on the hot path.
    app.addHook('onRequest', (request, _reply, done) => {
      this.open.add(request);
      done();
    });
    // onSend runs for every reply sent, an error's included, also to a client that is gone;
    // onResponse (the reply written) is the backstop for a reply that skips onSend.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (this.closing && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
      this.end(request);
      done(null, payload);
    });
    app.addHook('onResponse', (request, _reply, done) => {
      this.end(request);
      done();
    });
  }

  /**
   * Resolves once no request is in progress, or when `timeoutMs` has passed: how many still were
   * (0: all done).
   */
  async settled(timeoutMs: number): Promise<number> {
    if (this.open.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return this.open.size;
  }

  private end(request: object): void {
    if (!this.open.delete(request) || this.open.size > 0) return;
    for (const wake of this.idleWaiters.splice(0)) wake();
  }
}
