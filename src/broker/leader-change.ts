/**
 * Riding out a JetStream leader change (docs/operations.md, "JetStream cluster"). While a stream
 * or consumer has no leader (its node died; the others elect one in a few seconds) a publish or
 * a pull is not refused: nobody answers it. So a publish is tried with a timeout of half a
 * second and tried again, the same `Nats-Msg-Id` each time (the stream keeps one), after a short
 * pause drawn at random (jitter: the 500 publishes of a hand-off, and every instance's, do not
 * come back in step), until its deadline; a pull carries heartbeats every half second, so a pull
 * held at a dead consumer leader ends within about a second and is sent again.
 */
import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';

/** One publish try: an answer from a live leader takes milliseconds; an election takes seconds. */
export const PUBLISH_TRY_MS = 500;
/** Every try of one publish: beyond the elections NATS makes (4–9 s measured), under the duplicate window. */
export const PUBLISH_DEADLINE_MS = 20_000;
/** A pull's heartbeats: two missed (about 1 s) end it. The client's floor is 500 ms. */
export const PULL_HEARTBEAT_MS = 500;

/** The pause before try `n` (0-based) of a publish: random in [0, min(500 ms, 50 ms × 2^n)] ("full jitter"). */
export function jitteredPauseMs(n: number, random: () => number = Math.random): number {
  return Math.round(random() * Math.min(500, 50 * 2 ** n));
}

/** An error a leader change explains (nobody answered in time, or JetStream said it is busy): worth trying again. */
export function isLeaderGap(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && depth < 3; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof TimeoutError || cause instanceof NoRespondersError) return true;
    // The client's name for a request nobody answered (its class is not exported).
    if (cause instanceof Error && cause.name === 'JetStreamNotEnabled') return true;
    if (cause instanceof RequestError && cause.isNoResponders()) return true;
    // 503: "JetStream system temporarily unavailable" (10008), no stream leader yet.
    if (cause instanceof JetStreamApiError && (cause.status === 503 || cause.code === 10008)) return true;
    if (cause instanceof Error && cause.name === 'TimeoutError') return true;
  }
  return false;
}

/** A pull that ended because its heartbeats stopped: the consumer's leader is gone (or the link to it). */
export function isHeartbeatsMissed(error: unknown): boolean {
  return error instanceof JetStreamError && /heartbeats? missed/i.test(error.message);
}
