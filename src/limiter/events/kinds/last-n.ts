/**
 * `last-n`: fires while at least `m` of the subject's last `n` recorded outcomes equal `outcome`.
 * Outcomes are recorded by events (`RiskEngine.record`), never by checks. Exact.
 * In Redis a list (`:n`), LPUSH + LTRIM to n, its TTL refreshed by a push
 * (`../scripts/includes/last-n.lua`, op `'n'`).
 */
import { type BaseRule, RISK_LIMITS } from '../base.js';
import { STATE_BYTES } from '../cost.js';
import { int, plainResult, type RiskKind, text } from './kind.js';

export interface LastNRiskRule extends BaseRule {
  kind: 'last-n';
  n: number;
  m: number;
  outcome: string;
}

export interface LastNOp {
  kind: 'last-n';
  subject: string;
  n: number;
  m: number;
  outcome: string;
  /** Outcome to record first, if any. */
  push?: string;
}

/** The subject's outcomes in process, newest first. */
interface LastNState {
  outcomes: string[];
  bytes: number;
}

const lastNBytes = (state: LastNState) => STATE_BYTES.key + STATE_BYTES.lastNBase + state.outcomes.length * STATE_BYTES.lastNEntry;

export const lastNKind: RiskKind<LastNRiskRule, LastNOp, 'LAST_N_MATCHED'> = {
  name: 'last-n',
  parameters: ['n', 'm', 'outcome'],
  codes: ['LAST_N_MATCHED'],
  recordsEvents: true,

  normalize(rule, path, base) {
    const n = int(rule, 'n', path, 1, RISK_LIMITS.lastN);
    return { ...base, kind: 'last-n', n, m: int(rule, 'm', path, 1, n), outcome: text(rule, 'outcome', path, RISK_LIMITS.outcomeLength) };
  },

  reads: () => [],

  stateBytes: (rule) => ({
    bytes: STATE_BYTES.key + STATE_BYTES.lastNBase + rule.n * STATE_BYTES.lastNEntry,
    why: `${rule.n.toLocaleString('en-US')} outcomes × ${STATE_BYTES.lastNEntry} B`,
  }),

  op: (rule, { subject, outcome }) => ({
    kind: 'last-n',
    subject,
    n: rule.n,
    m: rule.m,
    outcome: rule.outcome,
    ...(outcome === undefined ? {} : { push: outcome }),
  }),

  reason: (rule, result) => ({ code: 'LAST_N_MATCHED', count: result.count, limit: rule.m }),

  store: {
    memory(op, _t, { state: stateOf }) {
      const state = stateOf(op.subject, 'last-n', (): LastNState => ({ outcomes: [], bytes: 0 }), lastNBytes);
      if (op.push !== undefined) {
        state.outcomes.unshift(op.push);
        state.outcomes.length = Math.min(state.outcomes.length, op.n);
      }
      let count = 0;
      for (let i = 0; i < Math.min(op.n, state.outcomes.length); i++) if (state.outcomes[i] === op.outcome) count++;
      return { fired: count >= op.m, count };
    },

    encode: (op, { base, now, lastNRetentionMs }) => ({
      keys: [`${base}n`],
      args: ['n', op.n, op.m, op.outcome, op.push ?? '', lastNRetentionMs],
      now,
    }),

    result: plainResult,
  },
};
