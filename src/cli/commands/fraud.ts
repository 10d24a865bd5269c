/** `sluice fraud` and `sluice prices`: a tenant's SMS pumping protection policy and the SMS prices (docs/fraud.md). */
import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import { FraudPolicyBody, SmsPricesBody } from '../../api/fraud.js';
import { SluiceError } from '../../core/errors.js';
import { collect, parseJsonObject } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

const EXAMPLE =
  '{"mode":"monitor","countries":{"allow":["CN","GB","US"]},"prefixes":[{"digits":8,"windowSeconds":3600,"limit":30}],' +
  '"conversion":{"windowSeconds":3600,"minSends":20,"minRate":0.3,"by":"country"},"monthlySpend":{"limit":200,"currency":"USD"}}';

/** `COUNTRY=PRICE` (`GB=0.04`) into the prices' `countries`; the schema checks the code and the amount. */
function parsePrices(specs: string[]): Record<string, number> {
  const countries: Record<string, number> = {};
  for (const spec of specs) {
    const [code, price, ...rest] = spec.split('=');
    const amount = Number(price);
    if (!code || price === undefined || price === '' || rest.length || !Number.isFinite(amount))
      throw new SluiceError('INVALID_REQUEST', `--country takes COUNTRY=PRICE (GB=0.04), not "${spec.slice(0, 40)}"`, {
        details: { field: 'countries' },
      });
    countries[code] = amount;
  }
  return countries;
}

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

export function addFraudCommands(program: Command, context: CommandContext): void {
  const fraud = program.command('fraud').description("Set or show a tenant's SMS pumping protection policy (docs/fraud.md)");
  fraud
    .command('set <tenantId> <policy>')
    .description(`Replace the policy: a JSON object (or @file; mode defaults to monitor), e.g.: fraud set TENANT '${EXAMPLE}'`)
    .action((tenantId: string, text: string) =>
      context.withService('fraud', async (service) => {
        const source = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
        const body = await checkBody(FraudPolicyBody, parseJsonObject(source, 'the policy') as Static<typeof FraudPolicyBody>);
        print(await service.setPolicy(tenantId, body));
      }),
    );
  fraud
    .command('show <tenantId>')
    .description('The policy as stored (what set takes back)')
    .action((tenantId: string) => context.withService('fraud', async (service) => print(await service.getPolicy(tenantId))));

  const prices = program.command('prices').description('Set or show the SMS prices spend caps are estimated with');
  prices
    .command('set <currency> <default>')
    .description('Replace the SMS prices, e.g.: prices set USD 0.05 --country GB=0.04 --country US=0.0079')
    .option('--country <price>', 'COUNTRY=PRICE for one country; repeat for more', collect, [])
    .action((currency: string, fallback: string, options: { country: string[] }) =>
      context.withService('fraud', async (service) => {
        const countries = parsePrices(options.country);
        const body = await checkBody(SmsPricesBody, {
          currency,
          default: fallback.trim() === '' ? Number.NaN : Number(fallback),
          ...(options.country.length ? { countries } : {}),
        });
        print(await service.setPrices(body));
      }),
    );
  prices.command('show').action(() => context.withService('fraud', async (service) => print(await service.getPrices())));
}
