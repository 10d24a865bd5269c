/**
 * A tenant's API keys: issue one (shown once), rotate one (a new key is issued, then the old one
 * revoked, so the tenant is never without a working key), revoke one.
 */
import { useState } from 'preact/hooks';
import { ErrorAlert, Notice } from '../ui/alert.js';
import { useAction, useLoad } from '../ui/calls.js';
import { useClient } from '../ui/context.js';
import { CheckField } from '../ui/fields.js';
import { OnceSecret } from '../ui/once-secret.js';

export function TenantKeys({ tenantId }: { tenantId: string }) {
  const client = useClient();
  const keys = useLoad(() => client.admin.listApiKeys(tenantId), [tenantId]);
  const action = useAction();
  const [issued, setIssued] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [revokeOthers, setRevokeOthers] = useState(false);
  const issue = async () => {
    const key = await action.run(() => client.admin.issueApiKey(tenantId, { keepOthers: !revokeOthers }));
    if (key) {
      setIssued(key.apiKey);
      setNotice(revokeOthers ? 'Key issued; the other keys are revoked.' : 'Key issued.');
      keys.reload();
    }
  };
  const rotate = async (keyId: string) => {
    const key = await action.run(() => client.admin.issueApiKey(tenantId, { keepOthers: true }));
    if (!key) return;
    setIssued(key.apiKey);
    const revoked = await action.run(() => client.tenantConfig.revokeApiKey(tenantId, keyId));
    setNotice(revoked ? `Key rotated: ${keyId} revoked.` : `A new key is issued, but ${keyId} is still live (see the error).`);
    keys.reload();
  };
  const revoke = async (keyId: string) => {
    if (await action.run(() => client.tenantConfig.revokeApiKey(tenantId, keyId))) {
      setNotice(`Key ${keyId} revoked.`);
      keys.reload();
    }
  };
  return (
    <section aria-labelledby="tenant-keys">
      <h2 id="tenant-keys">API keys</h2>
      <ErrorAlert error={keys.error} />
      <table>
        <caption class="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Revoked</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(keys.value?.keys ?? []).map((key) => (
            <tr key={key.id}>
              <td>
                <code>{key.id}</code>
              </td>
              <td>
                <code>{key.prefix}…</code>
              </td>
              <td>{key.createdAt}</td>
              <td>{key.revokedAt ?? '—'}</td>
              <td>
                {key.revokedAt ? null : (
                  <>
                    <button type="button" disabled={action.busy} onClick={() => rotate(key.id)} aria-label={`Rotate key ${key.prefix}`}>
                      Rotate
                    </button>{' '}
                    <button
                      type="button"
                      class="danger"
                      disabled={action.busy}
                      onClick={() => revoke(key.id)}
                      aria-label={`Revoke key ${key.prefix}`}
                    >
                      Revoke
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <CheckField label="Revoke the tenant's other keys" checked={revokeOthers} onChange={setRevokeOthers} />
        <button type="button" disabled={action.busy} onClick={issue}>
          Issue a key
        </button>
      </div>
      <ErrorAlert error={action.error} />
      <Notice text={notice} />
      {issued ? <OnceSecret label="New API key" secret={issued} /> : null}
    </section>
  );
}
