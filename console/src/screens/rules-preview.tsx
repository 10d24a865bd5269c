/**
 * The rules dry run: sends at the offsets entered, replayed against the rules being edited (or the
 * stored ones) in a limiter of the server's own: nothing is recorded, no live count is read.
 */
import { useState } from 'preact/hooks';
import type { RuleSet, RulesPreviewView } from '../../../src/client/index.js';
import { ErrorAlert } from '../ui/alert.js';
import { useAction } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, TextField } from '../ui/fields.js';

/** `0, 1, 2, 3, 60s, 10m` → milliseconds; a bare number is milliseconds. Undefined for a part that is not an offset. */
export function parseOffsets(text: string): number[] | undefined {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const offsets = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((part) => {
      const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(part);
      return match ? Math.round(Number(match[1]) * units[match[2] ?? 'ms']!) : Number.NaN;
    });
  return offsets.some(Number.isNaN) ? undefined : offsets;
}

export function RulesPreview({ tenantId, channel, rules }: { tenantId: string; channel: string; rules: () => RuleSet['rules'] }) {
  const client = useClient();
  const [offsets, setOffsets] = useState('0, 1s, 2s, 3s, 30s, 61s');
  const [preview, setPreview] = useState<RulesPreviewView>();
  const action = useAction();
  const [parseError, setParseError] = useState<string>();
  return (
    <section aria-labelledby="rules-preview">
      <h2 id="rules-preview">Preview</h2>
      <p>Replays sends to one recipient against the rules above as edited (not yet saved): nothing is recorded.</p>
      <Form
        label="Preview the rules"
        submit="Preview"
        busy={action.busy}
        onSubmit={async () => {
          const parsed = parseOffsets(offsets);
          setParseError(parsed ? undefined : 'Offsets are numbers with an optional unit: 0, 500ms, 2s, 10m, 1h');
          if (!parsed) return;
          const result = await action.run(() =>
            client.admin.previewRules(tenantId, channel, { rules: rules(), sends: parsed.map((atMs) => ({ atMs })) }),
          );
          setPreview(result);
        }}
      >
        <TextField
          label="Send offsets"
          value={offsets}
          onInput={setOffsets}
          required
          hint="After the first send: 0, 500ms, 2s, 10m, 1h (not decreasing)"
        />
      </Form>
      {parseError ? (
        <div role="alert" class="alert">
          {parseError}
        </div>
      ) : null}
      <ErrorAlert error={action.error} />
      {preview ? (
        <table>
          <caption>Replayed sends</caption>
          <thead>
            <tr>
              <th scope="col">At</th>
              <th scope="col">Decision</th>
              <th scope="col">Counts before</th>
              <th scope="col">Retry after</th>
            </tr>
          </thead>
          <tbody>
            {preview.results.map((result, index) => (
              <tr key={index} class={result.allowed ? 'allowed' : 'denied'}>
                <td>{result.atMs} ms</td>
                <td>
                  {result.allowed ? 'allowed' : `denied: ${result.code}${result.rule === undefined ? '' : ` (rule ${result.rule + 1})`}`}
                </td>
                <td>{result.counts.join(', ') || '—'}</td>
                <td>{result.retryAfterMs ? `${Math.ceil(result.retryAfterMs / 1000)} s` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
