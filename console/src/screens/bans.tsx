/** Lift a recipient's ban on a tenant channel, optionally with its counts, so the next send is admitted. */
import { useState } from 'preact/hooks';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { CheckField, Form, SelectField, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS } from '../ui/vocabulary.js';

export function BansScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  const client = useClient();
  const [channel, setChannel] = useState('sms');
  const [to, setTo] = useState('');
  const [resetCounts, setResetCounts] = useState(false);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  return (
    <>
      <h1>Bans</h1>
      <TenantPicker screen="bans" tenantId={tenantId} />
      {tenantId ? (
        <section aria-labelledby="lift-ban">
          <h2 id="lift-ban">Lift a ban</h2>
          <Form
            label="Lift a ban"
            submit="Lift ban"
            busy={action.busy}
            onSubmit={async () => {
              const lifted = await action.run(() => client.admin.liftBan(tenantId, channel, to.trim(), { resetCounts }));
              if (lifted)
                setNotice(`${lifted.lifted ? 'Ban lifted' : 'No ban was in force'} on ${to.trim()}${resetCounts ? ', counts reset' : ''}.`);
            }}
          >
            <SelectField label="Channel" value={channel} options={CHANNELS} onChange={setChannel} />
            <TextField label="Recipient" value={to} onInput={setTo} required hint="As sent: a phone, an email, a webhook target" />
            <CheckField
              label="Also reset its counts (the next send is admitted even inside the windows)"
              checked={resetCounts}
              onChange={setResetCounts}
            />
          </Form>
          <ErrorAlert error={action.error} />
          <Notice text={notice} />
        </section>
      ) : null}
    </>
  );
}
