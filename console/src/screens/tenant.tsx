/** One tenant: suspend or resume it, its QPS limit, daily quotas per channel and send weight, its backlog, its API keys. */
import { useLayoutEffect, useState } from 'preact/hooks';
import type { TenantDetails } from '../../../src/client/index.js';
import { href } from '../router.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, TextField, wholeNumber } from '../ui/fields.js';
import { CHANNELS } from '../ui/vocabulary.js';
import { TenantBacklog } from './tenant-backlog.js';
import { TenantKeys } from './tenant-keys.js';

export function TenantScreen({ args }: { args: string[] }) {
  const id = args[0] ?? '';
  const client = useClient();
  const tenant = useLoad(() => client.admin.getTenant(id), [id]);
  return (
    <>
      <h1>Tenant {tenant.value?.name ?? id}</h1>
      <p>
        <a href={href('tenants')}>All tenants</a> · <a href={href('rules', id)}>Rules</a> · <a href={href('templates', id)}>Templates</a> ·{' '}
        <a href={href('webhooks', id)}>Webhooks</a>
      </p>
      <ErrorAlert error={tenant.error} />
      {tenant.value ? <TenantSettings tenant={tenant.value} onChanged={tenant.reload} /> : null}
      {tenant.value ? <TenantBacklog tenantId={id} /> : null}
      {tenant.value ? <TenantKeys tenantId={id} /> : null}
    </>
  );
}

function TenantSettings({ tenant, onChanged }: { tenant: TenantDetails; onChanged: () => void }) {
  const client = useClient();
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [qps, setQps] = useState('');
  const [weight, setWeight] = useState('');
  const [quotas, setQuotas] = useState<Record<string, string>>({});
  // The form follows the stored values when they change, not on every reload: a reload after a
  // suspend or resume answers the same quotas and must not wipe what is being typed. A layout
  // effect, so the form never shows old values after the page has painted new ones.
  const stored = JSON.stringify([tenant.qpsLimit, tenant.dailyQuotas, tenant.sendWeight]);
  useLayoutEffect(() => {
    setQps(tenant.qpsLimit === null ? '' : String(tenant.qpsLimit));
    setWeight(String(tenant.sendWeight));
    setQuotas(Object.fromEntries(CHANNELS.map((channel) => [channel, String(tenant.dailyQuotas[channel] ?? '')])));
  }, [stored]);
  const suspended = tenant.status === 'suspended';
  return (
    <section aria-labelledby="tenant-settings">
      <h2 id="tenant-settings">Status and quotas</h2>
      <p>
        Status: <strong>{tenant.status}</strong>{' '}
        <button
          type="button"
          disabled={action.busy}
          onClick={async () => {
            const changed = await action.run(() => client.admin.updateTenant(tenant.id, { status: suspended ? 'active' : 'suspended' }));
            if (changed) {
              setNotice(`Tenant ${changed.status}.`);
              onChanged();
            }
          }}
        >
          {suspended ? 'Resume tenant' : 'Suspend tenant'}
        </button>
      </p>
      <Form
        label="Quotas"
        submit="Save quotas"
        busy={action.busy}
        onSubmit={async () => {
          const dailyQuotas = Object.fromEntries(CHANNELS.map((channel) => [channel, wholeNumber(quotas[channel] ?? '') ?? null]));
          const changed = await action.run(() => client.admin.updateTenant(tenant.id, { qpsLimit: wholeNumber(qps) ?? null, dailyQuotas }));
          if (changed) {
            setNotice('Quotas saved.');
            onChanged();
          }
        }}
      >
        <TextField label="QPS limit" type="number" value={qps} onInput={setQps} hint="Empty: unlimited" />
        {CHANNELS.map((channel) => (
          <TextField
            key={channel}
            label={`Daily quota, ${channel}`}
            type="number"
            value={quotas[channel] ?? ''}
            onInput={(value) => setQuotas({ ...quotas, [channel]: value })}
            hint="Messages per UTC day; empty: unlimited"
          />
        ))}
      </Form>
      <Form
        label="Fair share"
        submit="Save send weight"
        busy={action.busy}
        onSubmit={async () => {
          const sendWeight = wholeNumber(weight) ?? 1;
          const changed = await action.run(() => client.admin.updateTenant(tenant.id, { sendWeight }));
          if (changed) {
            setNotice(`Send weight ${changed.sendWeight} saved.`);
            onChanged();
          }
        }}
      >
        <TextField
          label="Send weight"
          type="number"
          value={weight}
          onInput={setWeight}
          hint="1 to 100: its share of the shared send pools while other tenants have due messages; empty: 1"
        />
      </Form>
      <ErrorAlert error={action.error} />
      <Notice text={notice} />
    </section>
  );
}
