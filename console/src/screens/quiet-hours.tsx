/** A tenant channel's quiet hours: a time zone, windows (HH:MM–HH:MM), bulk only or all messages. */
import { useEffect, useState } from 'preact/hooks';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, SelectField, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS } from '../ui/vocabulary.js';

export function QuietHoursScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  const [channel, setChannel] = useState('sms');
  return (
    <>
      <h1>Quiet hours</h1>
      <TenantPicker screen="quiet-hours" tenantId={tenantId} />
      {tenantId ? (
        <>
          <SelectField label="Channel" value={channel} options={CHANNELS} onChange={setChannel} />
          <QuietHoursEditor key={`${tenantId}/${channel}`} tenantId={tenantId} channel={channel} />
        </>
      ) : null}
    </>
  );
}

function QuietHoursEditor({ tenantId, channel }: { tenantId: string; channel: string }) {
  const client = useClient();
  const current = useLoad(() => client.tenantConfig.getQuietHours(tenantId, channel), [tenantId, channel]);
  const [timeZone, setTimeZone] = useState('UTC');
  const [windows, setWindows] = useState('22:00-08:00');
  const [applies, setApplies] = useState<'bulk' | 'all'>('bulk');
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (!current.value) return;
    setTimeZone(current.value.timeZone);
    setWindows(current.value.windows.map((window) => `${window.from}-${window.to}`).join(', '));
    setApplies(current.value.applies);
  }, [current.value]);
  return (
    <section aria-labelledby="quiet-editor">
      <h2 id="quiet-editor">
        {channel}: {current.value ? 'quiet hours set' : 'no quiet hours'}
      </h2>
      {current.error && current.error.code !== 'NOT_FOUND' ? <ErrorAlert error={current.error} /> : null}
      <Form
        label={`Quiet hours of ${channel}`}
        submit="Save quiet hours"
        busy={action.busy}
        onSubmit={async () => {
          const parsed = windows
            .split(',')
            .map((part) => part.trim())
            .filter(Boolean)
            .map((part) => {
              const [from = '', to = ''] = part.split('-').map((time) => time.trim());
              return { from, to };
            });
          if (await action.run(() => client.tenantConfig.setQuietHours(tenantId, channel, { timeZone, windows: parsed, applies }))) {
            setNotice('Quiet hours saved.');
            current.reload();
          }
        }}
      >
        <TextField label="Time zone" value={timeZone} onInput={setTimeZone} required hint="IANA, e.g. Asia/Shanghai" />
        <TextField
          label="Windows"
          value={windows}
          onInput={setWindows}
          hint="Local HH:MM-HH:MM, comma-separated; 22:00-08:00 crosses midnight"
        />
        <SelectField
          label="Applies to"
          value={applies}
          options={[
            { value: 'bulk', label: 'bulk messages only' },
            { value: 'all', label: 'all messages' },
          ]}
          onChange={(value) => setApplies(value as 'bulk' | 'all')}
        />
      </Form>
      {current.value ? (
        <button
          type="button"
          class="danger"
          disabled={action.busy}
          onClick={async () => {
            if (await action.run(() => client.tenantConfig.removeQuietHours(tenantId, channel))) {
              setNotice('Quiet hours removed.');
              current.reload();
            }
          }}
        >
          Remove quiet hours
        </button>
      ) : null}
      <ErrorAlert error={action.error} />
      <Notice text={notice} />
    </section>
  );
}
