/** Risk rule sets per action, edited as JSON: a parse error is shown here, a rule the API refuses with its 400. */
import { useEffect, useState } from 'preact/hooks';
import type { ClientError, RiskRuleSetInput } from '../../../src/client/index.js';
import { navigate } from '../router.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, TextArea, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';

const EXAMPLE = JSON.stringify(
  { rules: [{ name: 'codes-per-user', kind: 'window', key: ['user'], windowSeconds: 300, limit: 3, banSeconds: 900 }] },
  null,
  2,
);

export function RiskScreen({ args }: { args: string[] }) {
  const [tenantId, actionArg] = args;
  const [action, setAction] = useState(actionArg ?? '');
  useEffect(() => setAction(actionArg ?? ''), [actionArg]);
  return (
    <>
      <h1>Risk rule sets</h1>
      <TenantPicker screen="risk" tenantId={tenantId} />
      {tenantId ? (
        <Form label="Action" submit="Open the action's rule set" onSubmit={() => navigate('risk', tenantId, action)}>
          <TextField label="Action" value={action} onInput={setAction} required hint="e.g. send-code, login" />
        </Form>
      ) : null}
      {tenantId && actionArg ? <RiskEditor key={`${tenantId}/${actionArg}`} tenantId={tenantId} action={actionArg} /> : null}
    </>
  );
}

function RiskEditor({ tenantId, action }: { tenantId: string; action: string }) {
  const client = useClient();
  const current = useLoad(() => client.tenantConfig.getRiskRuleSet(tenantId, action), [tenantId, action]);
  const [text, setText] = useState('');
  const [parseError, setParseError] = useState<ClientError>();
  const save = useAction();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (current.value) setText(JSON.stringify({ rules: current.value.rules }, null, 2));
    else if (current.error?.code === 'NOT_FOUND') setText(EXAMPLE);
  }, [current.value, current.error]);
  return (
    <section aria-labelledby="risk-editor">
      <h2 id="risk-editor">
        {action}
        {current.value ? `, version ${current.value.version}` : ' (no rule set yet)'}
      </h2>
      {current.error && current.error.code !== 'NOT_FOUND' ? <ErrorAlert error={current.error} /> : null}
      <Form
        label={`Rule set of ${action}`}
        submit="Save rule set"
        busy={save.busy}
        onSubmit={async () => {
          let body: RiskRuleSetInput;
          try {
            body = JSON.parse(text) as RiskRuleSetInput;
          } catch (error) {
            setParseError({ code: 'INVALID_REQUEST', message: `not JSON: ${(error as Error).message}` });
            return;
          }
          setParseError(undefined);
          const saved = await save.run(() => client.tenantConfig.setRiskRuleSet(tenantId, action, body));
          if (saved) {
            setNotice(`Saved, version ${saved.version}.`);
            current.reload();
          }
        }}
      >
        <TextArea
          label="Rule set (JSON)"
          rows={14}
          value={text}
          onInput={setText}
          hint="{rules: [...]}; kinds: window, last-n, distinct, seen (docs/risk.md)"
        />
      </Form>
      <ErrorAlert error={parseError ?? save.error} />
      <Notice text={notice} />
    </section>
  );
}
