/** `sluice rules`: set or show a tenant channel's frequency rules and its fallback while Redis is away. */
import type { Command } from 'commander';
import { RulesPreviewBody } from '../../api/lookups.js';
import { RuleSetBody } from '../../api/rules.js';
import { SluiceError } from '../../core/errors.js';
import { ALGORITHMS, FALLBACK_MODES } from '../../limiter/index.js';
import type { FallbackView } from '../../services/contracts.js';
import { channelArg, collect, integerArg, oneOf, parseRule } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

const RULE = 'WINDOW_S:LIMIT[:BAN_S[:ALGORITHM]]';

export function addRulesCommands(program: Command, context: CommandContext): void {
  const rules = program.command('rules').description("Set or show a tenant channel's frequency rules");
  rules
    .command('set <tenantId> <channel> <rules...>')
    .description(
      `Replace the rules, e.g.: rules set TENANT sms 60:3:600 3600:10 86400:50 (${RULE}, ALGORITHM ${oneOf(ALGORITHMS)}). ` +
        'The fallback while Redis is away stays as it is unless --fallback is given.',
    )
    .option('--fallback <mode>', `${FALLBACK_MODES.join(', ')}, or default (the service default, SLUICE_FALLBACK_MODE)`)
    .option('--fallback-rule <rule>', `a static fallback rule, ${RULE}; repeat for more`, collect, [])
    .action((tenantId: string, channel: string, specs: string[], options: { fallback?: string; fallbackRule: string[] }) =>
      context.withService('rules', async (rules) => {
        if (options.fallbackRule.length > 0 && options.fallback !== 'static') {
          throw new SluiceError('INVALID_REQUEST', '--fallback-rule goes with --fallback static');
        }
        // Without --fallback the stored one is kept: replacing the rules must not drop a fallback set through the API.
        const fallback =
          options.fallback === undefined
            ? (await rules.getRules(tenantId, channelArg(channel))).fallback
            : options.fallback === 'default'
              ? null
              : {
                  mode: options.fallback,
                  ...(options.fallbackRule.length ? { rules: options.fallbackRule.map((spec, index) => parseRule(spec, index)) } : {}),
                };
        const body = await checkBody(RuleSetBody, { rules: specs.map((spec, index) => parseRule(spec, index)), fallback });
        const set = await rules.setRules(tenantId, channelArg(channel), body.rules, body.fallback as FallbackView | null);
        console.log(JSON.stringify(set, null, 2));
      }),
    );
  rules
    .command('preview <tenantId> <channel> <atMs...>')
    .description(
      'Dry run: replay sends to one recipient at these offsets (ms after the first, not decreasing) against --rule rules, ' +
        "or the channel's stored ones; reads no live counts, records nothing. E.g.: rules preview TENANT sms 0 1 2 3 60000 --rule 60:3:600",
    )
    .option('--rule <rule>', `a rule to try instead of the stored ones, ${RULE}; repeat for more`, collect, [])
    .action((tenantId: string, channel: string, offsets: string[], options: { rule: string[] }) =>
      context.withService('lookups', async (lookups) => {
        const body = await checkBody(RulesPreviewBody, {
          ...(options.rule.length ? { rules: options.rule.map((spec, index) => parseRule(spec, index)) } : {}),
          sends: offsets.map((offset) => ({ atMs: integerArg(offset) })),
        });
        console.log(JSON.stringify(await lookups.previewRules(tenantId, channelArg(channel), body), null, 2));
      }),
    );
  rules
    .command('show <tenantId> <channel>')
    .action((tenantId: string, channel: string) =>
      context.withService('rules', async (rules) =>
        console.log(JSON.stringify(await rules.getRules(tenantId, channelArg(channel)), null, 2)),
      ),
    );
}
