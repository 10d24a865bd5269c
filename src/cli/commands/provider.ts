/** `sluice provider`: register, change, list and remove delivery providers. */
import type { Command } from 'commander';
import { NewProviderBody, ProviderPatchBody } from '../../api/providers.js';
import { CHANNELS, type Channel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import { PROVIDER_KINDS } from '../../providers/kinds.js';
import type { NewProviderInput, ProviderPatch } from '../../services/contracts.js';
import { channelArg, integerArg, oneOf, parseJsonObject, readSecret } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

interface SecretOptions {
  secretFile?: string;
  secretEnv?: string;
}

interface AddOptions extends SecretOptions {
  scope: string;
  channel: Channel;
  kind: string;
  name: string;
  qps: number;
  priority?: number;
  providerConfig?: string;
}

interface UpdateOptions extends SecretOptions {
  name?: string;
  qps?: number;
  priority?: number;
  providerConfig?: string;
  clearSecret?: boolean;
  enable?: boolean;
  disable?: boolean;
}

export function addProviderCommands(program: Command, context: CommandContext): void {
  const provider = program.command('provider').description('Register, change, list and remove delivery providers');
  provider
    .command('add')
    .description('Register a provider; credentials are read from a JSON file or an environment variable, never from the command line')
    .requiredOption('--scope <scope>', 'tenant id, or * for every tenant')
    .requiredOption('--channel <channel>', oneOf(CHANNELS), channelArg)
    .requiredOption('--kind <kind>', oneOf(PROVIDER_KINDS))
    .requiredOption('--name <name>')
    .requiredOption('--qps <n>', "the vendor's QPS contract: sends a second", integerArg)
    .option('--priority <n>', 'lower is tried first', integerArg)
    // Not --config: that is the settings file, taken anywhere on the command line (npm start -- -c FILE).
    .option(
      '--provider-config <json>',
      'non-secret settings as JSON, e.g. {"host":"smtp.example.com","port":465,"from":"no-reply@example.com"}',
    )
    .option('--secret-file <path>', 'JSON object of credentials')
    .option('--secret-env <variable>', 'environment variable holding the JSON object of credentials')
    .action((options: AddOptions) =>
      context.withService('providers', async (providers) => {
        const secret = readSecret(options);
        const body = await checkBody(NewProviderBody, {
          scope: options.scope,
          channel: options.channel,
          kind: options.kind,
          name: options.name,
          qps: options.qps,
          ...(options.priority === undefined ? {} : { priority: options.priority }),
          ...(options.providerConfig ? { config: parseJsonObject(options.providerConfig, '--provider-config') } : {}),
          ...(secret ? { secret } : {}),
        });
        console.log(JSON.stringify(await providers.createProvider(body as NewProviderInput), null, 2));
      }),
    );
  provider
    .command('update <id>')
    .description(
      'Change a provider: only what is given changes; --provider-config replaces the whole config, a new secret the whole secret',
    )
    .option('--name <name>')
    .option('--qps <n>', "the vendor's QPS contract", integerArg)
    .option('--priority <n>', 'lower is tried first', integerArg)
    .option('--provider-config <json>', 'non-secret settings as JSON (replaces the stored config)')
    .option('--secret-file <path>', 'JSON object of credentials (replaces the stored secret)')
    .option('--secret-env <variable>', 'environment variable holding the JSON object of credentials')
    .option('--clear-secret', 'remove the stored credentials')
    .option('--enable', 'send through it again')
    .option('--disable', 'stop sending through it (messages go to the next provider of the channel)')
    .action((id: string, options: UpdateOptions) =>
      context.withService('providers', async (providers) => {
        if (options.enable && options.disable) throw new SluiceError('INVALID_REQUEST', 'give --enable or --disable, not both');
        const secret = readSecret(options);
        if (options.clearSecret && secret) throw new SluiceError('INVALID_REQUEST', 'give a new secret or --clear-secret, not both');
        const patch = {
          ...(options.name === undefined ? {} : { name: options.name }),
          ...(options.qps === undefined ? {} : { qps: options.qps }),
          ...(options.priority === undefined ? {} : { priority: options.priority }),
          ...(options.providerConfig ? { config: parseJsonObject(options.providerConfig, '--provider-config') } : {}),
          ...(secret ? { secret } : options.clearSecret ? { secret: null } : {}),
          ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
        };
        if (Object.keys(patch).length === 0)
          throw new SluiceError('INVALID_REQUEST', 'nothing to change: give at least one option (--help lists them)');
        const body = await checkBody(ProviderPatchBody, patch);
        const updated = await providers.updateProvider(id, body as ProviderPatch);
        if (!updated) throw new SluiceError('NOT_FOUND', `no provider ${id}`);
        console.log(JSON.stringify(updated, null, 2));
      }),
    );
  provider
    .command('list')
    .option('--scope <scope>')
    .option('--channel <channel>', oneOf(CHANNELS), channelArg)
    .action((options: { scope?: string; channel?: Channel }) =>
      context.withService('providers', async (providers) => console.log(JSON.stringify(await providers.listProviders(options), null, 2))),
    );
  provider
    .command('receipt-token <id>')
    .description(
      "Issue a new delivery-receipt token for an SMS provider (the previous one stops working); prints the path to give the vendor's console",
    )
    .action((id: string) =>
      context.withService('receipts', async (receipts) => {
        const issued = await receipts.issueToken(id);
        if (!issued) throw new SluiceError('NOT_FOUND', `no provider ${id}`);
        console.log(JSON.stringify(issued, null, 2));
      }),
    );
  provider.command('remove <id>').action((id: string) =>
    context.withService('providers', async (providers) => {
      if (!(await providers.deleteProvider(id))) throw new SluiceError('NOT_FOUND', `no provider ${id}`);
      console.log(`removed ${id}`);
    }),
  );
}
