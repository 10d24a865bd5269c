/**
 * The rules dry run: a sequence of sends to one recipient replayed against a fresh in-process
 * limiter, on a clock that moves only to each send's time. It reads no live state and records
 * nothing anywhere: the store lives for one call.
 */
import { SluiceError } from '../core/errors.js';
import { Limiter, ManualClock, MemoryStore, type Rule } from '../limiter/index.js';
import type { PreviewResultView } from './lookup-views.js';

/** The most sends one dry run replays. */
export const MAX_PREVIEW_SENDS = 1000;

/** The subject of the replay: one recipient, in a store of its own. */
const SUBJECT = 'preview';

/**
 * The decision each send would meet, in order. `sends[i].atMs` are offsets (ms) from `startMs`,
 * non-decreasing; `startMs` places the first send in absolute time, which the counter algorithms'
 * windows are aligned to (fixed-window, sliding-counter); sliding-log and token-bucket answer the
 * same wherever it is. No rules: every send passes, as admission checks nothing then.
 * INVALID_REQUEST naming `sends[i].atMs` for an offset out of order, or too many sends.
 */
export async function replaySends(
  rules: readonly Rule[],
  sends: readonly { atMs: number }[],
  startMs: number,
): Promise<PreviewResultView[]> {
  if (sends.length > MAX_PREVIEW_SENDS) {
    throw new SluiceError('INVALID_REQUEST', `at most ${MAX_PREVIEW_SENDS} sends per preview`, { details: { field: 'sends' } });
  }
  sends.forEach((send, index) => {
    if (!Number.isSafeInteger(send.atMs) || send.atMs < 0 || (index > 0 && send.atMs < sends[index - 1]!.atMs)) {
      throw new SluiceError('INVALID_REQUEST', `sends[${index}].atMs must be a non-negative integer, not below the send before it`, {
        details: { field: `sends[${index}].atMs` },
      });
    }
  });
  if (rules.length === 0) return sends.map((send) => ({ atMs: send.atMs, allowed: true, counts: [] }));
  const clock = new ManualClock(startMs);
  const limiter = new Limiter({ store: new MemoryStore({ clock }) });
  const results: PreviewResultView[] = [];
  for (const [index, send] of sends.entries()) {
    const now = startMs + send.atMs;
    clock.set(now);
    const decision = await limiter.check({ subject: SUBJECT, rules, requestId: `send-${index}`, now });
    results.push({
      atMs: send.atMs,
      allowed: decision.allowed,
      ...(decision.code === 'OK' ? {} : { code: decision.code, retryAfterMs: decision.retryAfterMs }),
      ...(decision.rule === undefined ? {} : { rule: decision.rule }),
      counts: decision.counts,
    });
  }
  await limiter.close();
  return results;
}
