/** A tenant's webhooks: subscribe an endpoint (secret shown once), edit, rotate the secret, remove, and its events with replay. */
import { useState } from 'preact/hooks';
import type { WebhookView } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { CheckField, Form, TextField } from '../ui/fields.js';
import { OnceSecret } from '../ui/once-secret.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { EVENT_TYPES } from '../ui/vocabulary.js';
import { WebhookEvents } from './webhook-events.js';

type EventType = (typeof EVENT_TYPES)[number];

export function WebhooksScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  return (
    <>
      <h1>Webhooks</h1>
      <TenantPicker screen="webhooks" tenantId={tenantId} />
      {tenantId ? <Webhooks key={tenantId} tenantId={tenantId} /> : null}
    </>
  );
}

function Webhooks({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const list = useLoad(() => client.tenantConfig.listWebhooks(tenantId), [tenantId]);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [secret, setSecret] = useState<{ id: string; secret: string }>();
  const [editing, setEditing] = useState<WebhookView>();
  const [eventsOf, setEventsOf] = useState<string>();
  return (
    <>
      <section aria-labelledby="webhook-list">
        <h2 id="webhook-list">Endpoints</h2>
        <ErrorAlert error={list.error} />
        <table>
          <caption class="visually-hidden">Webhooks</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Enabled</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.webhooks ?? []).map((hook) => (
              <tr key={hook.id}>
                <td>
                  <code>{hook.url}</code>
                  {hook.description ? <div>{hook.description}</div> : null}
                </td>
                <td>{hook.events.join(', ')}</td>
                <td>{hook.enabled ? 'yes' : 'no'}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => setEditing(hook)}>
                    Edit
                  </button>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={async () => {
                      const rotated = await action.run(() => client.tenantConfig.rotateWebhookSecret(tenantId, hook.id));
                      if (rotated) setSecret({ id: hook.id, secret: rotated.secret });
                    }}
                  >
                    Rotate secret
                  </button>
                  <button type="button" class="secondary" onClick={() => setEventsOf(hook.id)}>
                    Events
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={async () => {
                      if (await action.run(() => client.tenantConfig.deleteWebhook(tenantId, hook.id))) {
                        setNotice('Webhook removed.');
                        list.reload();
                      }
                    }}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <ErrorAlert error={action.error} />
        <Notice text={notice} />
        {secret ? <OnceSecret label={`Signing secret of ${secret.id}`} secret={secret.secret} /> : null}
      </section>
      <WebhookForm
        key={editing?.id ?? 'new'}
        tenantId={tenantId}
        editing={editing}
        onDone={(made) => {
          if (made) setSecret(made);
          setEditing(undefined);
          list.reload();
        }}
      />
      {eventsOf ? <WebhookEvents key={eventsOf} tenantId={tenantId} webhookId={eventsOf} /> : null}
    </>
  );
}

function WebhookForm(props: {
  tenantId: string;
  editing: WebhookView | undefined;
  onDone: (made?: { id: string; secret: string }) => void;
}) {
  const client = useClient();
  const { editing } = props;
  const [url, setUrl] = useState(editing?.url ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [events, setEvents] = useState<EventType[]>(editing?.events ?? ['message.sent', 'message.failed']);
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const action = useAction();
  return (
    <section aria-labelledby="webhook-form">
      <h2 id="webhook-form">{editing ? `Edit ${editing.id}` : 'Subscribe an endpoint'}</h2>
      <Form
        label={editing ? 'Edit webhook' : 'New webhook'}
        submit={editing ? 'Save webhook' : 'Create webhook'}
        busy={action.busy}
        onSubmit={async () => {
          const body = { url, events, description: description || null };
          if (editing) {
            // The listed URL has secret-like parameters masked: send it only when changed.
            const patch = { ...body, enabled, ...(url === editing.url ? { url: undefined } : {}) };
            if (await action.run(() => client.tenantConfig.updateWebhook(props.tenantId, editing.id, patch))) props.onDone();
          } else {
            const made = await action.run(() => client.tenantConfig.createWebhook(props.tenantId, body));
            if (made) props.onDone({ id: made.id, secret: made.secret });
          }
        }}
      >
        <TextField label="URL" type="url" value={url} onInput={setUrl} required />
        <TextField label="Description" value={description} onInput={setDescription} />
        <fieldset>
          <legend>Events</legend>
          {EVENT_TYPES.map((type) => (
            <CheckField
              key={type}
              label={type}
              checked={events.includes(type)}
              onChange={(on) => setEvents(on ? [...events, type] : events.filter((other) => other !== type))}
            />
          ))}
        </fieldset>
        {editing ? <CheckField label="Enabled" checked={enabled} onChange={setEnabled} /> : null}
      </Form>
      {editing ? (
        <button type="button" class="secondary" onClick={() => props.onDone()}>
          Cancel editing
        </button>
      ) : null}
      <ErrorAlert error={action.error} />
    </section>
  );
}
