/**
 * `claim`: not a rule kind but an op of the same stores, the dedupe of outcome events
 * (`RiskEngine.record` with a request id). Claims `subject` for `ttlMs`: fires when it was
 * claimed already; `ttlMs: 0` releases it. In Redis `SET NX PX` on the Redis clock (`:c`), op
 * `'c'` of `../scripts/includes/claim.lua`.
 */
import { STATE_BYTES } from '../cost.js';
import { type EventOpHandler, plainResult } from './kind.js';

export interface ClaimOp {
  kind: 'claim';
  subject: string;
  ttlMs: number;
}

interface ClaimState {
  until: number;
  bytes: number;
}

export const claimOp: EventOpHandler<ClaimOp> = {
  memory(op, t, { state: stateOf }) {
    const state = stateOf(
      op.subject,
      'claim',
      (): ClaimState => ({ until: Number.NEGATIVE_INFINITY, bytes: 0 }),
      () => STATE_BYTES.key,
    );
    const claimed = state.until > t;
    if (op.ttlMs === 0) state.until = Number.NEGATIVE_INFINITY;
    else if (!claimed) state.until = t + op.ttlMs;
    return { fired: claimed, count: claimed ? 1 : 0 };
  },

  encode: (op, { base, now }) => ({ keys: [`${base}c`], args: ['c', op.ttlMs], now }),

  result: plainResult,
};
