/** `sluice risk`: set or show an action's risk rule set (docs/risk.md). */
import { readFileSync } from 'node:fs';
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import { RiskRuleSetBody } from '../../api/risk.js';
import { jsonSyntaxProblem, SluiceError } from '../../core/errors.js';
import { RISK_RULE_KINDS } from '../../limiter/index.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

/** A JSON array of rules, or `@path` of a file holding one (or holding GET's `{rules}` answer). */
function readRules(text: string): unknown {
  const source = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (error) {
    throw new SluiceError('INVALID_REQUEST', `the rules are ${jsonSyntaxProblem(error)}`, { details: { field: 'rules' } });
  }
  return Array.isArray(parsed) ? { rules: parsed } : parsed;
}

export function addRiskCommands(program: Command, context: CommandContext): void {
  const risk = program.command('risk').description("Set or show an action's risk rules");
  risk
    .command('set <tenantId> <action> <rules>')
    .description(
      `Replace the rules: a JSON array (or @file), each {name, kind (${RISK_RULE_KINDS.join(', ')}), key: [dimension...], ...}, ` +
        `e.g.: risk set TENANT otp '[{"name":"per-phone","kind":"window","key":["phone"],"windowSeconds":300,"limit":3}]'`,
    )
    .action((tenantId: string, action: string, text: string) =>
      context.withService('rules', async (rules) => {
        const body = await checkBody(RiskRuleSetBody, readRules(text) as Static<typeof RiskRuleSetBody>);
        console.log(JSON.stringify(await rules.setRiskRules(tenantId, action, body.rules), null, 2));
      }),
    );
  risk
    .command('show <tenantId> <action>')
    .action((tenantId: string, action: string) =>
      context.withService('rules', async (rules) => console.log(JSON.stringify(await rules.getRiskRules(tenantId, action), null, 2))),
    );
}
