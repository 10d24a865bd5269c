/** A webhook's events in one status (failed by default: given up after 24 h), each failed one can be replayed. */
import { useState } from 'preact/hooks';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { SelectField } from '../ui/fields.js';

export function WebhookEvents({ tenantId, webhookId }: { tenantId: string; webhookId: string }) {
  const client = useClient();
  const [status, setStatus] = useState('failed');
  const events = useLoad(
    () => client.tenantConfig.listWebhookEvents(tenantId, webhookId, { status, limit: 100 }),
    [tenantId, webhookId, status],
  );
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  return (
    <section aria-labelledby="webhook-events">
      <h2 id="webhook-events">Events of {webhookId}</h2>
      <SelectField label="Status" value={status} options={['failed', 'pending', 'delivered']} onChange={setStatus} />
      <ErrorAlert error={events.error} />
      {events.value && events.value.events.length === 0 ? <p>No {status} events.</p> : null}
      <table>
        <caption class="visually-hidden">Webhook events</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Message</th>
            <th scope="col">Type</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last error</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(events.value?.events ?? []).map((event) => (
            <tr key={event.id}>
              <td>
                <code>{event.id}</code>
              </td>
              <td>
                <code>{event.messageId}</code>
              </td>
              <td>{event.type}</td>
              <td>{event.attempts}</td>
              <td>{event.lastError ?? '—'}</td>
              <td>
                {event.status === 'failed' ? (
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={async () => {
                      if (await action.run(() => client.tenantConfig.replayWebhookEvent(tenantId, webhookId, event.id))) {
                        setNotice(`Event ${event.id} is pending again.`);
                        events.reload();
                      }
                    }}
                  >
                    Replay {event.id}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorAlert error={action.error} />
      <Notice text={notice} />
    </section>
  );
}
