/**
 * Providers: list, create, edit, delete. A secret is write-only: the API never returns one (only
 * `hasSecret`), and the form's secret field starts empty: left empty, the stored secret is kept.
 */
import { useState } from 'preact/hooks';
import type { ClientError, ProviderView } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { CheckField, Form, SelectField, TextArea, TextField, wholeNumber } from '../ui/fields.js';
import { CHANNELS, PROVIDER_KINDS } from '../ui/vocabulary.js';

export function ProvidersScreen() {
  const client = useClient();
  const list = useLoad(() => client.admin.listProviders(), []);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [editing, setEditing] = useState<ProviderView>();
  return (
    <>
      <h1>Providers</h1>
      <section aria-labelledby="provider-list">
        <h2 id="provider-list">All providers</h2>
        <ErrorAlert error={list.error} />
        <table>
          <caption class="visually-hidden">Providers</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Channel</th>
              <th scope="col">Kind</th>
              <th scope="col">Priority</th>
              <th scope="col">QPS</th>
              <th scope="col">Secret</th>
              <th scope="col">Enabled</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.providers ?? []).map((provider) => (
              <tr key={provider.id}>
                <td>{provider.name}</td>
                <td>{provider.scope}</td>
                <td>{provider.channel}</td>
                <td>{provider.kind}</td>
                <td>{provider.priority}</td>
                <td>{provider.qps}</td>
                <td>{provider.hasSecret ? 'set (never shown)' : 'none'}</td>
                <td>{provider.enabled ? 'yes' : 'no'}</td>
                <td class="actions">
                  <button type="button" class="secondary" onClick={() => setEditing(provider)}>
                    Edit {provider.name}
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={async () => {
                      if (await action.run(() => client.admin.deleteProvider(provider.id))) {
                        setNotice(`${provider.name} deleted.`);
                        list.reload();
                      }
                    }}
                  >
                    Delete {provider.name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <ErrorAlert error={action.error} />
        <Notice text={notice} />
      </section>
      <ProviderForm
        key={editing?.id ?? 'new'}
        editing={editing}
        onDone={(text) => {
          setNotice(text);
          setEditing(undefined);
          list.reload();
        }}
      />
    </>
  );
}

function parseObject(text: string, what: string): { value?: Record<string, never>; error?: ClientError } {
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    return { value: value as Record<string, never> };
  } catch (error) {
    return { error: { code: 'INVALID_REQUEST', message: `${what} is not a JSON object: ${(error as Error).message}` } };
  }
}

function ProviderForm({ editing, onDone }: { editing: ProviderView | undefined; onDone: (notice: string) => void }) {
  const client = useClient();
  const [scope, setScope] = useState(editing?.scope ?? '*');
  const [channel, setChannel] = useState<string>(editing?.channel ?? 'sms');
  const [kind, setKind] = useState<string>(editing?.kind ?? 'console');
  const [name, setName] = useState(editing?.name ?? '');
  const [priority, setPriority] = useState(String(editing?.priority ?? 0));
  const [qps, setQps] = useState(String(editing?.qps ?? 10));
  const [config, setConfig] = useState(editing ? JSON.stringify(editing.config, null, 2) : '{}');
  const [secret, setSecret] = useState('');
  const [enabled, setEnabled] = useState(editing?.enabled ?? true);
  const action = useAction();
  const [parseError, setParseError] = useState<ClientError>();
  return (
    <section aria-labelledby="provider-form">
      <h2 id="provider-form">{editing ? `Edit ${editing.name}` : 'New provider'}</h2>
      <Form
        label={editing ? 'Edit provider' : 'New provider'}
        submit={editing ? 'Save provider' : 'Create provider'}
        busy={action.busy}
        onSubmit={async () => {
          const parsedConfig = parseObject(config, 'Config');
          const parsedSecret = parseObject(secret, 'Secret');
          setParseError(parsedConfig.error ?? parsedSecret.error);
          if (parsedConfig.error || parsedSecret.error) return;
          const common = {
            name,
            priority: wholeNumber(priority) ?? 0,
            qps: wholeNumber(qps) ?? 0,
            ...(parsedConfig.value ? { config: parsedConfig.value } : {}),
            ...(parsedSecret.value ? { secret: parsedSecret.value } : {}),
            enabled,
          };
          const saved = editing
            ? await action.run(() => client.admin.updateProvider(editing.id, common))
            : await action.run(() => client.admin.createProvider({ ...common, scope, channel: channel as never, kind: kind as never }));
          if (saved) {
            setSecret('');
            onDone(`${saved.name} ${editing ? 'saved' : 'created'}.`);
          }
        }}
      >
        {editing ? null : (
          <>
            <TextField label="Scope" value={scope} onInput={setScope} required hint="A tenant id, or * for every tenant" />
            <SelectField label="Channel" value={channel} options={CHANNELS} onChange={setChannel} />
            <SelectField label="Kind" value={kind} options={PROVIDER_KINDS} onChange={setKind} />
          </>
        )}
        <TextField label="Name" value={name} onInput={setName} required />
        <TextField label="Priority" type="number" value={priority} onInput={setPriority} hint="Lower is tried first" />
        <TextField label="QPS" type="number" value={qps} onInput={setQps} required hint="The vendor's QPS contract" />
        <TextArea label="Config (JSON)" rows={5} value={config} onInput={setConfig} />
        <TextArea
          label="Secret (JSON, write-only)"
          rows={3}
          value={secret}
          onInput={setSecret}
          hint={
            editing?.hasSecret
              ? 'A secret is stored; it is never shown. Empty: keep it; a JSON object: replace it.'
              : 'Credentials, sealed at rest, never shown again'
          }
        />
        <CheckField label="Enabled" checked={enabled} onChange={setEnabled} />
      </Form>
      {editing ? (
        <button type="button" class="secondary" onClick={() => onDone('')}>
          Cancel editing
        </button>
      ) : null}
      <ErrorAlert error={parseError ?? action.error} />
    </section>
  );
}
