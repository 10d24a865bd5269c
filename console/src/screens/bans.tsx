/**
 * A recipient's ban on a tenant channel: look it up (the ban and each rule's count now, a peek that
 * consumes nothing), then lift it, optionally with its counts, so the next send is admitted.
 */
import { useState } from 'preact/hooks';
import type { BanStatusView } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { CheckField, Form, SelectField, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS } from '../ui/vocabulary.js';

export function BansScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  return (
    <>
      <h1>Bans</h1>
      <TenantPicker screen="bans" tenantId={tenantId} />
      {tenantId ? <Ban key={tenantId} tenantId={tenantId} /> : null}
    </>
  );
}

function Ban({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const [channel, setChannel] = useState('sms');
  const [to, setTo] = useState('');
  const [resetCounts, setResetCounts] = useState(false);
  const [status, setStatus] = useState<BanStatusView>();
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const lookUp = async () => {
    const found = await action.run(() => client.admin.getBanStatus(tenantId, channel, to.trim()));
    setStatus(found);
    return found;
  };
  return (
    <section aria-labelledby="ban-lookup">
      <h2 id="ban-lookup">Look up a recipient</h2>
      <Form
        label="Look up a ban"
        submit="Look up"
        busy={action.busy}
        onSubmit={async () => {
          setNotice(undefined);
          await lookUp();
        }}
      >
        <SelectField label="Channel" value={channel} options={CHANNELS} onChange={setChannel} />
        <TextField label="Recipient" value={to} onInput={setTo} required hint="As sent: a phone, an email, a webhook target" />
      </Form>
      <ErrorAlert error={action.error} />
      {status ? <BanStatus status={status} /> : null}
      {status ? (
        <div class="row">
          <CheckField
            label="Also reset its counts (the next send is admitted even inside the windows)"
            checked={resetCounts}
            onChange={setResetCounts}
          />
          <button
            type="button"
            disabled={action.busy}
            onClick={async () => {
              const lifted = await action.run(() => client.admin.liftBan(tenantId, channel, status.recipient, { resetCounts }));
              if (!lifted) return;
              setNotice(
                `${lifted.lifted ? 'Ban lifted' : 'No ban was in force'} on ${status.recipient}${resetCounts ? ', counts reset' : ''}.`,
              );
              await lookUp();
            }}
          >
            Lift ban
          </button>
        </div>
      ) : null}
      <Notice text={notice} />
    </section>
  );
}

function BanStatus({ status }: { status: BanStatusView }) {
  return (
    <div class="ban-status">
      <p>
        <code>{status.recipient}</code> on {status.channel}:{' '}
        <strong>{status.banned ? `banned until ${status.bannedUntil}` : 'not banned'}</strong>;{' '}
        {status.allowed
          ? 'a send now would be admitted'
          : `a send now would be refused (retry in ${Math.ceil(status.retryAfterMs / 1000)} s)`}
        .
      </p>
      {status.rules.length ? (
        <table>
          <caption>Counts at {status.at}</caption>
          <thead>
            <tr>
              <th scope="col">Window (s)</th>
              <th scope="col">Limit</th>
              <th scope="col">Ban (s)</th>
              <th scope="col">Count now</th>
            </tr>
          </thead>
          <tbody>
            {status.rules.map((rule, index) => (
              <tr key={index}>
                <td>{rule.windowSeconds}</td>
                <td>{rule.limit}</td>
                <td>{rule.banSeconds}</td>
                <td>{rule.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No rules on this channel: nothing is counted.</p>
      )}
    </div>
  );
}
