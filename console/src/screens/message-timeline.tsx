/** One message as an operator reads it: what it is, then its timeline (accepted, attempts, receipt, status callbacks) by time. */
import type { AdminMessageView } from '../../../src/client/index.js';
import { ErrorAlert } from '../ui/alert.js';
import { useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';

interface Step {
  at: string;
  what: string;
  detail: string;
}

function timeline(message: AdminMessageView): Step[] {
  const steps: Step[] = [{ at: message.createdAt, what: 'accepted', detail: `due ${message.dueAt}` }];
  // Monitor mode's lines: what SMS pumping protection would have refused at acceptance.
  for (const flag of message.fraud?.flags ?? [])
    steps.push({ at: message.createdAt, what: `fraud (monitor): would refuse, ${flag.rule}`, detail: `${flag.code}: ${flag.message}` });
  if (message.confirmedAt) steps.push({ at: message.confirmedAt, what: 'confirmed (feedback)', detail: 'the code was used' });
  for (const attempt of message.deliveryAttempts) {
    steps.push({
      at: attempt.startedAt,
      what: `attempt ${attempt.attempt}: ${attempt.outcome}`,
      detail: [attempt.provider ? `provider ${attempt.provider}` : 'no provider', attempt.error ?? ''].filter(Boolean).join(', '),
    });
  }
  if (message.receipt)
    steps.push({ at: message.receipt.at, what: `receipt: ${message.receipt.status}`, detail: `vendor code ${message.receipt.code}` });
  for (const event of message.events) {
    steps.push({
      at: event.createdAt,
      what: `callback ${event.type}: ${event.status}`,
      detail: `webhook ${event.webhookId}, ${event.attempts} attempts${event.lastError ? `, ${event.lastError}` : ''}`,
    });
  }
  return steps.sort((a, b) => a.at.localeCompare(b.at));
}

export function MessageTimeline({ tenantId, messageId }: { tenantId: string; messageId: string }) {
  const client = useClient();
  const message = useLoad(() => client.admin.getMessage(tenantId, messageId), [tenantId, messageId]);
  const value = message.value;
  return (
    <section aria-labelledby="message-detail">
      <h2 id="message-detail">Message {messageId}</h2>
      <button type="button" class="secondary" onClick={message.reload} disabled={message.loading}>
        Refresh
      </button>
      <ErrorAlert error={message.error} />
      {value ? (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{value.status}</dd>
            <dt>Channel</dt>
            <dd>{value.channel}</dd>
            <dt>To</dt>
            <dd>
              <code>{value.to}</code>
            </dd>
            <dt>Priority</dt>
            <dd>{value.priority ?? 'transactional'}</dd>
            <dt>Template</dt>
            <dd>{value.template ? `${value.template.name} v${value.template.version}` : '—'}</dd>
            <dt>Sent</dt>
            <dd>{value.sentAt ?? '—'}</dd>
            <dt>Provider's id</dt>
            <dd>{value.providerMessageId ?? '—'}</dd>
            <dt>Last error</dt>
            <dd>{value.lastError ?? '—'}</dd>
            <dt>Trace id</dt>
            <dd>{value.traceId ? <code>{value.traceId}</code> : '—'}</dd>
            {value.fraud?.cost !== undefined ? (
              <>
                <dt>Estimated cost</dt>
                <dd>{value.fraud.cost}</dd>
              </>
            ) : null}
          </dl>
          <h3>Timeline</h3>
          <ol class="timeline">
            {timeline(value).map((step, index) => (
              <li key={index}>
                <time dateTime={step.at}>{step.at}</time> <strong>{step.what}</strong>
                {step.detail ? <span> — {step.detail}</span> : null}
              </li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}
