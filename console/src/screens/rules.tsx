/** A tenant channel's frequency rules: windows, limits, bans, algorithms, and the fallback while Redis is down. */
import { useEffect, useState } from 'preact/hooks';
import type { RuleSet, RuleSetView } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, SelectField, TextField, wholeNumber } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { ALGORITHMS, CHANNELS } from '../ui/vocabulary.js';
import { RulesPreview } from './rules-preview.js';

interface RuleRow {
  windowSeconds: string;
  limit: string;
  banSeconds: string;
  algorithm: string;
}

const FALLBACKS = [
  { value: '', label: 'service default (SLUICE_FALLBACK_MODE)' },
  { value: 'local', label: 'local: the same rules, counted in process' },
  { value: 'allow', label: 'allow' },
  { value: 'deny', label: 'deny' },
];

const toRows = (view: RuleSetView): RuleRow[] =>
  view.rules.map((rule) => ({
    windowSeconds: String(rule.windowSeconds),
    limit: String(rule.limit),
    banSeconds: String(rule.banSeconds),
    algorithm: rule.algorithm ?? 'sliding-log',
  }));

export function RulesScreen({ args }: { args: string[] }) {
  const [tenantId, channelArg] = args;
  const channel = CHANNELS.find((name) => name === channelArg) ?? 'sms';
  return (
    <>
      <h1>Rules</h1>
      <TenantPicker screen="rules" tenantId={tenantId} />
      {tenantId ? (
        <RuleEditor key={`${tenantId}/${channel}`} tenantId={tenantId} channel={channel} />
      ) : (
        <p>Choose a tenant to edit its rules.</p>
      )}
    </>
  );
}

function RuleEditor({ tenantId, channel }: { tenantId: string; channel: string }) {
  const client = useClient();
  const rules = useLoad(() => client.admin.getRules(tenantId, channel), [tenantId, channel]);
  const [rows, setRows] = useState<RuleRow[]>([]);
  const [fallback, setFallback] = useState('');
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (!rules.value) return;
    setRows(toRows(rules.value));
    setFallback(rules.value.fallback?.mode ?? '');
  }, [rules.value]);
  const edit = (index: number, field: keyof RuleRow, value: string) =>
    setRows(rows.map((row, at) => (at === index ? { ...row, [field]: value } : row)));
  const edited = (): RuleSet['rules'] =>
    rows.map((row) => ({
      windowSeconds: wholeNumber(row.windowSeconds) ?? 0,
      limit: wholeNumber(row.limit) ?? 0,
      banSeconds: wholeNumber(row.banSeconds) ?? 0,
      algorithm: row.algorithm as NonNullable<RuleSet['rules'][number]['algorithm']>,
    }));
  const save = async () => {
    const body: RuleSet = {
      rules: edited(),
      // A static fallback's own rules are kept as they were: this form does not edit them.
      fallback:
        fallback === 'static'
          ? (rules.value?.fallback as RuleSet['fallback'])
          : fallback
            ? { mode: fallback as 'local' | 'allow' | 'deny' }
            : null,
    };
    const saved = await action.run(() => client.admin.setRules(tenantId, channel, body));
    if (saved) {
      setNotice(`Rules saved (version ${saved.version}); live within a second.`);
      rules.reload();
    }
  };
  return (
    <section aria-labelledby="rule-editor">
      <h2 id="rule-editor">
        {channel} rules{rules.value ? `, version ${rules.value.version}` : ''}
      </h2>
      <nav aria-label="Channels" class="tabs">
        <ul>
          {CHANNELS.map((name) => (
            <li key={name}>
              <a href={`#/rules/${encodeURIComponent(tenantId)}/${name}`} aria-current={name === channel ? 'page' : undefined}>
                {name}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <ErrorAlert error={rules.error} />
      <Form label={`${channel} rules`} submit="Save rules" busy={action.busy} onSubmit={save}>
        {rows.length === 0 ? (
          <p role="alert" class="alert">
            No rules: sends to one recipient are unlimited on this channel until rules are saved.
          </p>
        ) : null}
        {rows.map((row, index) => (
          <fieldset key={index} class="rule">
            <legend>Rule {index + 1}</legend>
            <TextField
              label="Window (seconds)"
              type="number"
              value={row.windowSeconds}
              onInput={(v) => edit(index, 'windowSeconds', v)}
              required
            />
            <TextField
              label="Limit (sends in the window)"
              type="number"
              value={row.limit}
              onInput={(v) => edit(index, 'limit', v)}
              required
            />
            <TextField label="Ban (seconds, 0: none)" type="number" value={row.banSeconds} onInput={(v) => edit(index, 'banSeconds', v)} />
            <SelectField label="Algorithm" value={row.algorithm} options={ALGORITHMS} onChange={(v) => edit(index, 'algorithm', v)} />
            <button type="button" class="secondary" onClick={() => setRows(rows.filter((_, at) => at !== index))}>
              Remove rule {index + 1}
            </button>
          </fieldset>
        ))}
        <button
          type="button"
          class="secondary"
          onClick={() => setRows([...rows, { windowSeconds: '60', limit: '3', banSeconds: '0', algorithm: 'sliding-log' }])}
        >
          Add a rule
        </button>
        <SelectField
          label="While Redis is slow or down"
          value={fallback}
          options={
            rules.value?.fallback?.mode === 'static'
              ? [...FALLBACKS, { value: 'static', label: 'static: its own rules, kept as set' }]
              : FALLBACKS
          }
          onChange={setFallback}
        />
      </Form>
      <ErrorAlert error={action.error} />
      <Notice text={notice} />
      <RulesPreview tenantId={tenantId} channel={channel} rules={edited} />
    </section>
  );
}
