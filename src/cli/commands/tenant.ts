/** `sluice tenant`: create, list, suspend and resume tenants, set their send weight; list, issue and revoke their API keys. */
import type { Command } from 'commander';
import { NewTenantBody, TenantPatchBody } from '../../api/tenants.js';
import { SluiceError } from '../../core/errors.js';
import type { TenantDetails } from '../../services/contracts.js';
import { integerArg } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

const SHOWN_ONCE = 'The API key is shown once: keep it now.';

export function addTenantCommands(program: Command, context: CommandContext): void {
  const tenant = program.command('tenant').description('Create, list, suspend and resume tenants; issue and revoke their API keys');
  tenant
    .command('create <name>')
    .option('--qps <n>', 'tenant requests per second', integerArg)
    .option('--send-weight <n>', "the tenant's share of the shared send pools, 1 to 100 (default 1)", integerArg)
    .action((name: string, options: { qps?: number; sendWeight?: number }) =>
      context.withService('tenants', async (tenants) => {
        const body = await checkBody(NewTenantBody, {
          name,
          ...(options.qps === undefined ? {} : { qpsLimit: options.qps }),
          ...(options.sendWeight === undefined ? {} : { sendWeight: options.sendWeight }),
        });
        const created = await tenants.createTenant(body.name, body.qpsLimit ?? null, body.sendWeight);
        console.log(JSON.stringify(created, null, 2));
        console.error(SHOWN_ONCE);
        for (const warning of created.warnings) console.error(`warning: ${warning}`);
        if (created.rules.length > 0) {
          const rules = created.rules.map((rule) => `${rule.windowSeconds}:${rule.limit}:${rule.banSeconds}`).join(' ');
          console.error(
            `Its sms and email rules (WINDOW_SECONDS:LIMIT:BAN_SECONDS, from SLUICE_NEW_TENANT_RULES): ${rules}; change them with sluice rules set ${created.id} sms …`,
          );
        }
      }),
    );
  tenant
    .command('list')
    .description('Every tenant, by id (creation order)')
    .action(() =>
      context.withService('tenants', async (tenants) => {
        const all: TenantDetails[] = [];
        let after: string | undefined;
        do {
          const page = await tenants.listTenants({ limit: 1000, ...(after === undefined ? {} : { after }) });
          all.push(...page.tenants);
          after = page.next ?? undefined;
        } while (after !== undefined);
        console.log(JSON.stringify(all, null, 2));
      }),
    );
  for (const [command, status] of [
    ['suspend', 'suspended'],
    ['resume', 'active'],
  ] as const) {
    tenant.command(`${command} <id>`).action((id: string) =>
      context.withService('tenants', async (tenants) => {
        const updated = await tenants.updateTenant(id, { status });
        if (!updated) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
        console.log(`${updated.name} (${updated.id}) is ${updated.status}`);
      }),
    );
  }
  tenant
    .command('set-weight <id>')
    .argument('<weight>', '1 to 100', integerArg)
    .description("Set the tenant's send weight: its share of the shared send pools against other tenants with due messages")
    .action((id: string, weight: number) =>
      context.withService('tenants', async (tenants) => {
        const body = await checkBody(TenantPatchBody, { sendWeight: weight });
        const updated = await tenants.updateTenant(id, body);
        if (!updated) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
        console.log(`${updated.name} (${updated.id}) has send weight ${updated.sendWeight}`);
      }),
    );
  tenant
    .command('keys <id>')
    .description("List a tenant's API keys (their first characters, never the keys)")
    .action((id: string) =>
      context.withService('tenants', async (tenants) => {
        const keys = await tenants.listApiKeys(id);
        if (!keys) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
        console.log(JSON.stringify({ keys }, null, 2));
      }),
    );
  tenant
    .command('new-key <id>')
    .description("Issue a new API key, shown once; the tenant's other keys keep working unless --revoke-others")
    .option('--revoke-others', "revoke the tenant's other keys at once, everywhere (a leaked key)")
    .option('--keep-others', 'keep the other keys working (the default; for scripts written when it was not)')
    .action((id: string, options: { revokeOthers?: boolean; keepOthers?: boolean }) =>
      context.withService('tenants', async (tenants) => {
        if (options.revokeOthers && options.keepOthers)
          throw new SluiceError('INVALID_REQUEST', 'give --revoke-others or --keep-others, not both');
        const issued = await tenants.issueApiKey(id, { keepOthers: !options.revokeOthers });
        if (!issued) throw new SluiceError('NOT_FOUND', `no tenant ${id}`);
        console.log(JSON.stringify(issued, null, 2));
        console.error(SHOWN_ONCE);
        // Revoking is the operator's explicit choice: say which keys still work, and how to end them.
        const others = ((await tenants.listApiKeys(id)) ?? []).filter((key) => key.revokedAt === null && key.id !== issued.keyId);
        if (others.length > 0)
          console.error(
            `The tenant's other keys still work (${others.map((key) => `${key.id} ${key.prefix}…`).join(', ')}): ` +
              `revoke each with sluice tenant revoke-key ${id} KEY_ID, or all at once next time with --revoke-others.`,
          );
      }),
    );
  tenant
    .command('revoke-key <id> <keyId>')
    .description('Revoke one API key')
    .action((id: string, keyId: string) =>
      context.withService('tenants', async (tenants) => {
        if (!(await tenants.revokeApiKey(id, keyId))) throw new SluiceError('NOT_FOUND', `tenant ${id} has no active key ${keyId}`);
        console.log(`revoked ${keyId}`);
      }),
    );
}
