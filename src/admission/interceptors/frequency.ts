import type { Channel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import { normalizeRecipient } from '../../core/recipients.js';
import { ATTR, annotate } from '../../core/tracing.js';
import type { Decision } from '../../limiter/index.js';
import type { Interceptor } from '../chain.js';
import type { FrequencyGate, FrequencyRequest, TenantDirectory } from '../ports.js';

/**
 * The subject one rule set counts: (tenant, channel, recipient key), the key being the canonical
 * form of the recipient (`normalizeRecipient`'s `key`), so every spelling counts as one. Stores
 * hash it into their keys.
 */
export const frequencySubject = (tenantId: string, channel: string, recipientKey: string) => `${tenantId}:${channel}:${recipientKey}`;

/** What {@link releaseFrequencySlot} needs of a stored message. */
export interface AdmittedMessage {
  id: string;
  tenantId: string;
  channel: Channel;
  recipient: string;
  /** When it was accepted: the frequency decision's time, where counter rules counted it. */
  createdAt: number;
}

/**
 * Gives a canceled message's frequency slot back: undoes its attempt (request id = message id) on
 * its subject with the channel's current rules. A no-op when it is not logged (already undone,
 * trimmed, rules without a log); the caller logs a failure and never fails the cancel for it.
 */
export async function releaseFrequencySlot(
  directory: TenantDirectory,
  gate: FrequencyGate,
  message: AdmittedMessage,
  defaultRegion: string,
): Promise<void> {
  const policy = await directory.channelPolicy(message.tenantId, message.channel);
  if (policy.rules.length === 0) return;
  // The stored delivery form normalises again to the key the send was counted under.
  const normalized = normalizeRecipient(message.channel, message.recipient, defaultRegion);
  if (!normalized.ok) return;
  const request: FrequencyRequest = {
    subject: frequencySubject(message.tenantId, message.channel, normalized.key),
    rules: policy.rules,
    requestId: message.id,
    fallback: policy.fallback,
  };
  // Undo reads only `at` (and which store decided, unknown here: the primary).
  const admitted: Decision = { allowed: true, code: 'OK', retryAfterMs: 0, counts: [], at: message.createdAt };
  await gate.undo(request, admitted);
}

/**
 * Recipient protection: the tenant's rules for the channel, ban and all rules in one atomic
 * decision. The message id is the request id, so a retried admission is recorded once. A
 * scheduled message counts at its due time (countAt), so the rules hold when it is sent.
 */
export function frequencyInterceptor(
  directory: TenantDirectory,
  gate: FrequencyGate,
  onDecision?: (channel: string, decision: Decision) => void,
): Interceptor {
  return {
    name: 'frequency',
    async run(context) {
      const tenant = context.tenant!;
      const message = context.message!;
      const policy = await directory.channelPolicy(tenant.id, message.channel);
      if (policy.rules.length === 0) {
        annotate({ [ATTR.ruleCount]: 0, [ATTR.decision]: 'OK' });
        return undefined;
      }
      const request: FrequencyRequest = {
        subject: frequencySubject(tenant.id, message.channel, message.recipientKey),
        rules: policy.rules,
        requestId: context.id,
        fallback: policy.fallback,
        ...(message.scheduled ? { countAt: message.dueAt } : {}),
      };
      const decision = await gate.check(request);
      onDecision?.(message.channel, decision);
      // The decision and the rule that refused, never the subject (it holds the recipient's key).
      annotate({
        [ATTR.ruleCount]: policy.rules.length,
        [ATTR.decision]: decision.code,
        ...(decision.rule === undefined ? {} : { [ATTR.refusingRule]: decision.rule }),
      });
      if (decision.code === 'BANNED') {
        throw new SluiceError('BANNED', `the recipient is banned on ${message.channel}`, { retryAfterMs: decision.retryAfterMs });
      }
      if (!decision.allowed) {
        // Named from the rules that decided: while Redis is away a fallback's own (static, or the
        // local share), or none at all (deny).
        const rule = decision.rule === undefined ? undefined : gate.decidingRules(request, decision)?.[decision.rule];
        if (!rule) {
          throw new SluiceError('RATE_LIMITED', 'frequency control is degraded and refuses sends until it recovers; retry later', {
            retryAfterMs: decision.retryAfterMs,
          });
        }
        throw new SluiceError(
          'RATE_LIMITED',
          `at most ${rule.limit} ${message.channel} message${rule.limit === 1 ? '' : 's'} per ${rule.windowMs / 1000} s to this recipient`,
          { retryAfterMs: decision.retryAfterMs, details: { rule: decision.rule, windowSeconds: rule.windowMs / 1000, limit: rule.limit } },
        );
      }
      return () => gate.undo(request, decision);
    },
  };
}
