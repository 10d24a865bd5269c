/** Tenants: the list (pages of 100) and a form that creates one; its first API key is shown once. */
import { useState } from 'preact/hooks';
import { href } from '../router.js';
import { ErrorAlert } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { Form, TextField, wholeNumber } from '../ui/fields.js';
import { OnceSecret } from '../ui/once-secret.js';

export function TenantsScreen() {
  const client = useClient();
  const [after, setAfter] = useState<string[]>([]);
  const page = useLoad(() => client.admin.listTenants({ limit: 100, after: after.at(-1) }), [after]);
  const [name, setName] = useState('');
  const [qps, setQps] = useState('');
  const [created, setCreated] = useState<{ id: string; apiKey: string; rules: string; warnings: string[] }>();
  const create = useAction();
  return (
    <>
      <h1>Tenants</h1>
      <section aria-labelledby="new-tenant">
        <h2 id="new-tenant">New tenant</h2>
        <Form
          label="New tenant"
          submit="Create tenant"
          busy={create.busy}
          onSubmit={async () => {
            const qpsLimit = wholeNumber(qps);
            const tenant = await create.run(() => client.admin.createTenant({ name, ...(qpsLimit === undefined ? {} : { qpsLimit }) }));
            if (tenant) {
              setCreated({
                id: tenant.id,
                apiKey: tenant.apiKey,
                rules: tenant.rules.map((rule) => `${rule.limit} in ${rule.windowSeconds} s (ban ${rule.banSeconds} s)`).join(', '),
                warnings: tenant.warnings,
              });
              setName('');
              setQps('');
              page.reload();
            }
          }}
        >
          <TextField label="Name" value={name} onInput={setName} required hint="Letters, digits, space, _ . -" />
          <TextField label="QPS limit" type="number" value={qps} onInput={setQps} hint="Requests per second; empty: unlimited" />
        </Form>
        <ErrorAlert error={create.error} />
        {created ? (
          <OnceSecret label={`API key of tenant ${created.id}`} secret={created.apiKey}>
            {created.warnings.map((warning) => (
              <p key={warning} role="alert" class="alert">
                {warning}
              </p>
            ))}
            {created.rules ? <p>Its sms and email rules, per recipient: {created.rules}.</p> : null}
            <a href={href('tenant', created.id)}>Open the tenant</a>
          </OnceSecret>
        ) : null}
      </section>
      <section aria-labelledby="tenant-list">
        <h2 id="tenant-list">All tenants</h2>
        <ErrorAlert error={page.error} />
        <table>
          <caption class="visually-hidden">Tenants</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Status</th>
              <th scope="col">QPS limit</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {(page.value?.tenants ?? []).map((tenant) => (
              <tr key={tenant.id}>
                <td>
                  <a href={href('tenant', tenant.id)}>{tenant.name}</a>
                </td>
                <td>
                  <code>{tenant.id}</code>
                </td>
                <td>{tenant.status}</td>
                <td>{tenant.qpsLimit ?? 'unlimited'}</td>
                <td>{tenant.createdAt}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div class="pager">
          {after.length > 0 ? (
            <button type="button" class="secondary" onClick={() => setAfter(after.slice(0, -1))}>
              Previous page
            </button>
          ) : null}
          {page.value?.next ? (
            <button type="button" class="secondary" onClick={() => setAfter([...after, page.value!.next!])}>
              Next page
            </button>
          ) : null}
        </div>
      </section>
    </>
  );
}
