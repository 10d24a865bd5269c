/**
 * A tenant's SMS pumping protection (docs/fraud.md): what it refused, or in monitor mode would have
 * refused, today by rule, the month's spend against the cap, and the policy edited as JSON (a
 * parse error shown here, a policy the API refuses with its 400).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ClientError, FraudPolicyInput, FraudStatusView } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, TextArea } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';

/** A first policy: monitor mode, the issue's thresholds; the operator edits it before saving. */
const EXAMPLE = JSON.stringify(
  {
    mode: 'monitor',
    countries: { allow: ['CN', 'GB', 'US'] },
    prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }],
    conversion: { windowSeconds: 3600, minSends: 20, minRate: 0.3, by: 'country' },
  },
  null,
  2,
);

const RULES = ['country', 'prefix', 'conversion', 'spend'] as const;

export function FraudScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  return (
    <>
      <h1>SMS fraud</h1>
      <TenantPicker screen="fraud" tenantId={tenantId} />
      {tenantId ? <FraudEditor key={tenantId} tenantId={tenantId} /> : null}
    </>
  );
}

function StatusTable({ status }: { status: FraudStatusView }) {
  const count = (rule: string, outcome: string) =>
    status.today.find((tally) => tally.rule === rule && tally.outcome === outcome)?.count ?? 0;
  const { spend } = status;
  return (
    <>
      <dl class="facts">
        <dt>Mode</dt>
        <dd>{status.mode === 'monitor' ? 'monitor: records what it would refuse, refuses nothing' : 'enforce: refuses'}</dd>
        <dt>Spend in {status.month} (UTC)</dt>
        <dd>
          {spend.limit === null
            ? `${spend.spent} (no cap)`
            : `${spend.spent} of ${spend.limit} ${spend.currency} (${Math.round((spend.spent / Math.max(spend.limit, 1e-6)) * 100)} %)`}
        </dd>
      </dl>
      <table>
        <caption>Today ({status.day}, UTC), on every instance</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Refused</th>
            <th scope="col">Would have refused (monitor)</th>
          </tr>
        </thead>
        <tbody>
          {RULES.map((rule) => (
            <tr key={rule}>
              <th scope="row">{rule}</th>
              <td>{count(rule, 'refuse')}</td>
              <td>{count(rule, 'would_refuse')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function FraudEditor({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const policy = useLoad(() => client.tenantConfig.getFraudPolicy(tenantId), [tenantId]);
  const status = useLoad(() => client.tenantConfig.getFraudStatus(tenantId), [tenantId]);
  const prices = useLoad(() => client.admin.getSmsPrices(), []);
  const [text, setText] = useState('');
  const [parseError, setParseError] = useState<ClientError>();
  const save = useAction();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (policy.value) setText(JSON.stringify(policy.value, null, 2));
    else if (policy.error?.code === 'NOT_FOUND') setText(EXAMPLE);
  }, [policy.value, policy.error]);
  const noPolicy = policy.error?.code === 'NOT_FOUND';
  return (
    <>
      <section aria-labelledby="fraud-status">
        <h2 id="fraud-status">What it did</h2>
        <button type="button" class="secondary" onClick={status.reload} disabled={status.loading}>
          Refresh
        </button>
        {noPolicy ? <p>No policy: this tenant's SMS are not judged.</p> : null}
        {status.error && status.error.code !== 'NOT_FOUND' ? <ErrorAlert error={status.error} /> : null}
        {status.value ? <StatusTable status={status.value} /> : null}
        <p>
          SMS prices (every tenant):{' '}
          {prices.value
            ? `${prices.value.default} ${prices.value.currency} by default, ${Object.keys(prices.value.countries ?? {}).length} countries priced`
            : 'not set: a spend cap needs them (sluice prices set)'}
        </p>
      </section>
      <section aria-labelledby="fraud-policy">
        <h2 id="fraud-policy">{noPolicy ? 'Policy (none yet)' : `Policy, ${policy.value?.mode ?? ''}`}</h2>
        {policy.error && !noPolicy ? <ErrorAlert error={policy.error} /> : null}
        <Form
          label="SMS fraud policy"
          submit="Save policy"
          busy={save.busy}
          onSubmit={async () => {
            let body: FraudPolicyInput;
            try {
              body = JSON.parse(text) as FraudPolicyInput;
            } catch (error) {
              setParseError({ code: 'INVALID_REQUEST', message: `not JSON: ${(error as Error).message}` });
              return;
            }
            setParseError(undefined);
            const saved = await save.run(() => client.tenantConfig.setFraudPolicy(tenantId, body));
            if (saved) {
              setNotice(`Saved, mode ${saved.mode}.`);
              policy.reload();
              status.reload();
            }
          }}
        >
          <TextArea
            label="Policy (JSON)"
            rows={16}
            value={text}
            onInput={setText}
            hint="mode (monitor first, then enforce), countries, prefixes, conversion, monthlySpend, safe: docs/fraud.md"
          />
        </Form>
        <ErrorAlert error={parseError ?? save.error} />
        <Notice text={notice} />
      </section>
    </>
  );
}
