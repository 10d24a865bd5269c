/** The global blacklist and each tenant's: list (by channel, paged), find in the page, add, remove. */
import { useState } from 'preact/hooks';
import { navigate } from '../router.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, SelectField, TextArea, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS } from '../ui/vocabulary.js';

const CHANNEL_FILTER = [
  { value: '', label: 'every channel value' },
  ...CHANNELS.map((c) => ({ value: c, label: c })),
  { value: '*', label: '* (every channel)' },
];

export function BlacklistsScreen({ args }: { args: string[] }) {
  const scope = args[0] ?? 'global';
  return (
    <>
      <h1>Blacklists</h1>
      <SelectField
        label="Blacklist"
        value={scope === 'global' ? 'global' : 'tenant'}
        options={[
          { value: 'global', label: 'global (every tenant)' },
          { value: 'tenant', label: "a tenant's" },
        ]}
        onChange={(value) => (value === 'global' ? navigate('blacklists', 'global') : navigate('blacklists', ''))}
      />
      {scope === 'global' ? null : <TenantPicker screen="blacklists" tenantId={scope || undefined} />}
      {scope ? <Blacklist key={scope} scope={scope} /> : null}
    </>
  );
}

function Blacklist({ scope }: { scope: string }) {
  const client = useClient();
  const [channel, setChannel] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const page = useLoad(
    () =>
      client.admin.listBlacklist(scope, {
        limit: 100,
        ...(channel ? { channel } : {}),
        ...(cursors.length ? { after: cursors.at(-1) } : {}),
      }),
    [scope, channel, cursors],
  );
  const [find, setFind] = useState('');
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [addChannel, setAddChannel] = useState('*');
  const [recipients, setRecipients] = useState('');
  const [reason, setReason] = useState('');
  const entries = (page.value?.entries ?? []).filter((entry) => !find || entry.recipient.includes(find.trim()));
  const remove = async (entryChannel: string, recipient: string) => {
    const removed = await action.run(() =>
      client.admin.removeFromBlacklist(scope, { channel: entryChannel as never, recipients: [recipient] }),
    );
    if (removed) {
      setNotice(`${removed.removed} removed.`);
      page.reload();
    }
  };
  return (
    <>
      <section aria-labelledby="blacklist-entries">
        <h2 id="blacklist-entries">Entries{scope === 'global' ? ' (global)' : ''}</h2>
        <div class="row">
          <SelectField
            label="Channel"
            value={channel}
            options={CHANNEL_FILTER}
            onChange={(value) => {
              setChannel(value);
              setCursors([]);
            }}
          />
          <TextField
            label="Find in this page"
            type="search"
            value={find}
            onInput={setFind}
            hint="Part of the canonical recipient (E.164, lower-case email)"
          />
        </div>
        <ErrorAlert error={page.error} />
        <table>
          <caption class="visually-hidden">Blacklist entries</caption>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Recipient</th>
              <th scope="col">Reason</th>
              <th scope="col">Added</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={`${entry.channel}/${entry.recipient}`}>
                <td>{entry.channel}</td>
                <td>
                  <code>{entry.recipient}</code>
                </td>
                <td>{entry.reason ?? '—'}</td>
                <td>{entry.createdAt}</td>
                <td>
                  <button type="button" class="danger" disabled={action.busy} onClick={() => remove(entry.channel, entry.recipient)}>
                    Remove {entry.recipient}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="pager">
          {cursors.length ? (
            <button type="button" class="secondary" onClick={() => setCursors(cursors.slice(0, -1))}>
              Previous page
            </button>
          ) : null}
          {page.value?.next ? (
            <button type="button" class="secondary" onClick={() => setCursors([...cursors, page.value!.next!])}>
              Next page
            </button>
          ) : null}
        </div>
      </section>
      <section aria-labelledby="blacklist-add">
        <h2 id="blacklist-add">Add recipients</h2>
        <Form
          label="Add to the blacklist"
          submit="Add"
          busy={action.busy}
          onSubmit={async () => {
            // One per line or comma-separated; spaces stay (`+86 139 0013 9000` is one phone).
            const list = recipients
              .split(/[\n,]+/)
              .map((recipient) => recipient.trim())
              .filter(Boolean);
            const added = await action.run(() =>
              client.admin.addToBlacklist(scope, { channel: addChannel as never, recipients: list, ...(reason ? { reason } : {}) }),
            );
            if (added) {
              setNotice(
                `Added ${added.added.join(', ') || 'nothing'}${added.invalid.length ? `; not recipients: ${added.invalid.join(', ')}` : ''}.`,
              );
              setRecipients('');
              page.reload();
            }
          }}
        >
          <SelectField label="Channel of the entries" value={addChannel} options={['*', ...CHANNELS]} onChange={setAddChannel} />
          <TextArea
            label="Recipients"
            rows={3}
            value={recipients}
            onInput={setRecipients}
            required
            hint="One per line or comma-separated"
          />
          <TextField label="Reason" value={reason} onInput={setReason} />
        </Form>
        <ErrorAlert error={action.error} />
        <Notice text={notice} />
      </section>
    </>
  );
}
