/**
 * A tenant's messages: the recent ones at once, newest first and paged; narrowed to a recipient
 * by the search; one looked up by id. Each opens its timeline.
 */
import { useEffect, useState } from 'preact/hooks';
import type { MessageSearch, MessageSearchPage } from '../../../src/client/index.js';
import { href, navigate } from '../router.js';
import { ErrorAlert } from '../ui/alert.js';
import { useAction } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, SelectField, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS, MESSAGE_STATUSES } from '../ui/vocabulary.js';
import { MessageTimeline } from './message-timeline.js';

const STATUSES = ['', ...MESSAGE_STATUSES];

export function MessagesScreen({ args }: { args: string[] }) {
  const [tenantId, messageId] = args;
  const [id, setId] = useState(messageId ?? '');
  return (
    <>
      <h1>Messages</h1>
      <TenantPicker screen="messages" tenantId={tenantId} />
      {tenantId ? (
        <>
          <section aria-labelledby="message-by-id">
            <h2 id="message-by-id">Look up by id</h2>
            <Form label="Look up a message" submit="Look up" onSubmit={() => navigate('messages', tenantId, id.trim())}>
              <TextField label="Message id" value={id} onInput={setId} required />
            </Form>
          </section>
          {messageId ? <MessageTimeline key={messageId} tenantId={tenantId} messageId={messageId} /> : null}
          <MessageList key={tenantId} tenantId={tenantId} />
        </>
      ) : null}
    </>
  );
}

/** What the list shows: the tenant's recent messages, or those to one recipient. */
type Filter = Pick<MessageSearch, 'to' | 'channel' | 'status'>;

function MessageList({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const [to, setTo] = useState('');
  const [channel, setChannel] = useState('');
  const [status, setStatus] = useState('');
  const [filter, setFilter] = useState<Filter>({});
  const [page, setPage] = useState<MessageSearchPage>();
  const [cursors, setCursors] = useState<string[]>([]);
  const action = useAction();
  const load = async (shown: Filter, cursor?: string) => {
    const found = await action.run(() => client.admin.searchMessages(tenantId, { ...shown, limit: 50, ...(cursor ? { cursor } : {}) }));
    if (found) setPage(found);
    return found;
  };
  const show = async (shown: Filter) => {
    setFilter(shown);
    setCursors([]);
    await load(shown);
  };
  // The recent messages as soon as the screen opens on a tenant (the list is keyed by tenant).
  useEffect(() => {
    void load({});
  }, []);
  return (
    <section aria-labelledby="message-list">
      <h2 id="message-list">{filter.to ? `Messages to ${filter.to}` : 'Recent messages'}</h2>
      <Form
        label="Search messages"
        submit="Search"
        busy={action.busy}
        onSubmit={() =>
          show({
            to: to.trim(),
            ...(channel ? { channel: channel as MessageSearch['channel'] } : {}),
            ...(status ? { status: status as MessageSearch['status'] } : {}),
          })
        }
      >
        <TextField label="Recipient" value={to} onInput={setTo} required hint="As sent: a phone, an email, a webhook target" />
        <SelectField label="Channel" value={channel} options={[{ value: '', label: 'every channel' }, ...CHANNELS]} onChange={setChannel} />
        <SelectField
          label="Status"
          value={status}
          options={STATUSES.map((name) => ({ value: name, label: name || 'any status' }))}
          onChange={setStatus}
        />
      </Form>
      {filter.to ? (
        <button type="button" class="secondary" onClick={() => show({})}>
          Show recent messages
        </button>
      ) : null}
      <ErrorAlert error={action.error} />
      {page ? (
        <>
          <p role="status">
            {page.messages.length === 0
              ? filter.to
                ? 'No messages to this recipient.'
                : 'No messages yet.'
              : `${page.messages.length} messages, newest first.`}
          </p>
          <table>
            <caption class="visually-hidden">{filter.to ? 'Messages found' : 'Recent messages'}</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Channel</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {page.messages.map((message) => (
                <tr key={message.id}>
                  <td>
                    <a href={href('messages', tenantId, message.id)}>{message.id}</a>
                  </td>
                  <td>{message.channel}</td>
                  <td>{message.to}</td>
                  <td>{message.status}</td>
                  <td>{message.createdAt}</td>
                  <td>{message.attempts}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="pager">
            {cursors.length ? (
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  const back = cursors.slice(0, -1);
                  if (await load(filter, back.at(-1))) setCursors(back);
                }}
              >
                Newer
              </button>
            ) : null}
            {page.nextCursor ? (
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  const next = page.nextCursor!;
                  if (await load(filter, next)) setCursors([...cursors, next]);
                }}
              >
                Older
              </button>
            ) : null}
          </div>
        </>
      ) : null}
    </section>
  );
}
