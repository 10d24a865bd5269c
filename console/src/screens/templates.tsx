/** A tenant's templates: the live ones, a template's versions, a new version (put), retire. */
import { useState } from 'preact/hooks';
import type { ClientError, TemplateInput } from '../../../src/client/index.js';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, SelectField, TextArea, TextField } from '../ui/fields.js';
import { TenantPicker } from '../ui/tenant-picker.js';
import { CHANNELS } from '../ui/vocabulary.js';

export function TemplatesScreen({ args }: { args: string[] }) {
  const tenantId = args[0];
  return (
    <>
      <h1>Templates</h1>
      <TenantPicker screen="templates" tenantId={tenantId} />
      {tenantId ? <Templates key={tenantId} tenantId={tenantId} /> : null}
    </>
  );
}

function Templates({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const list = useLoad(() => client.tenantConfig.listTemplates(tenantId), [tenantId]);
  const [open, setOpen] = useState<{ channel: string; name: string }>();
  const versions = useLoad(open ? () => client.tenantConfig.getTemplateVersions(tenantId, open.channel, open.name) : undefined, [
    tenantId,
    open?.channel,
    open?.name,
  ]);
  const action = useAction();
  const [notice, setNotice] = useState<string>();
  const [channel, setChannel] = useState('sms');
  const [name, setName] = useState('');
  const [spec, setSpec] = useState('{\n  "params": {"code": {"type": "string", "maxLength": 8}},\n  "body": "Your code is {{code}}"\n}');
  const [parseError, setParseError] = useState<ClientError>();
  return (
    <>
      <section aria-labelledby="live-templates">
        <h2 id="live-templates">Live templates</h2>
        <ErrorAlert error={list.error} />
        <table>
          <caption class="visually-hidden">Live templates</caption>
          <thead>
            <tr>
              <th scope="col">Channel</th>
              <th scope="col">Name</th>
              <th scope="col">Version</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.templates ?? []).map((template) => (
              <tr key={`${template.channel}/${template.name}`}>
                <td>{template.channel}</td>
                <td>{template.name}</td>
                <td>{template.version}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => setOpen({ channel: template.channel, name: template.name })}>
                    Versions of {template.name}
                  </button>{' '}
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={async () => {
                      if (await action.run(() => client.tenantConfig.retireTemplate(tenantId, template.channel, template.name))) {
                        setNotice(`${template.name} retired.`);
                        list.reload();
                      }
                    }}
                  >
                    Retire {template.name}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {open ? (
        <section aria-labelledby="template-versions">
          <h2 id="template-versions">
            Versions of {open.channel}/{open.name}
          </h2>
          <ErrorAlert error={versions.error} />
          <ol>
            {(versions.value?.versions ?? []).map((version) => (
              <li key={version.version}>
                Version {version.version}, {version.createdAt}
                {version.retiredAt ? `, retired ${version.retiredAt}` : ''}
                <pre>
                  {JSON.stringify(
                    { params: version.params, subject: version.subject, body: version.body, vendor: version.vendor },
                    null,
                    2,
                  )}
                </pre>
              </li>
            ))}
          </ol>
        </section>
      ) : null}
      <section aria-labelledby="put-template">
        <h2 id="put-template">Store a version</h2>
        <Form
          label="Store a template version"
          submit="Store version"
          busy={action.busy}
          onSubmit={async () => {
            let body: TemplateInput;
            try {
              body = JSON.parse(spec) as TemplateInput;
            } catch (error) {
              setParseError({ code: 'INVALID_REQUEST', message: `not JSON: ${(error as Error).message}` });
              return;
            }
            setParseError(undefined);
            const stored = await action.run(() => client.tenantConfig.putTemplate(tenantId, channel, name, body));
            if (stored) {
              setNotice(`${stored.name} version ${stored.version} stored.`);
              list.reload();
            }
          }}
        >
          <SelectField label="Channel" value={channel} options={CHANNELS} onChange={setChannel} />
          <TextField label="Template name" value={name} onInput={setName} required hint="Letters, digits, _ . -" />
          <TextArea label="Template (JSON)" value={spec} onInput={setSpec} hint="params, body, subject, html, vendor (docs/api.md)" />
        </Form>
        <ErrorAlert error={parseError ?? action.error} />
        <Notice text={notice} />
      </section>
    </>
  );
}
