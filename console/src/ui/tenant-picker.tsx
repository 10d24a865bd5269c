/** The tenant a per-tenant screen works on, chosen from the tenant list; the choice is in the hash (`#/<screen>/<tenant>`). */
import { navigate } from '../router.js';
import { ErrorAlert } from './alert.js';
import { useLoad } from './calls.js';
import { useClient } from './context.js';
import { SelectField } from './fields.js';

export function TenantPicker({ screen, tenantId }: { screen: string; tenantId: string | undefined }) {
  const client = useClient();
  const tenants = useLoad(() => client.admin.listTenants({ limit: 1000 }), []);
  const options = [
    { value: '', label: 'Choose a tenant' },
    ...(tenants.value?.tenants ?? []).map((tenant) => ({ value: tenant.id, label: `${tenant.name} (${tenant.id})` })),
  ];
  return (
    <div class="picker">
      <SelectField
        label="Tenant"
        value={tenantId ?? ''}
        options={options}
        onChange={(id) => (id ? navigate(screen, id) : navigate(screen))}
      />
      <ErrorAlert error={tenants.error} />
    </div>
  );
}
