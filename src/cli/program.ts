/**
 * The `sluice` command tree: serve, migrate, tenant, rules, risk, fraud, prices, template, blacklist, ban, provider, webhook,
 * messages, send, config check.
 * Operator commands work directly on the database (no admin token needed), through the same
 * services as the admin API and checked by the same schemas.
 */
import { readFileSync } from 'node:fs';
import { Command, Help } from 'commander';
import { addBanCommands } from './commands/ban.js';
import { addBlacklistCommands } from './commands/blacklist.js';
import { addConfigCommands } from './commands/config.js';
import { addFraudCommands } from './commands/fraud.js';
import { addMessagesCommands } from './commands/messages.js';
import { addMigrateCommand } from './commands/migrate.js';
import { addProviderCommands } from './commands/provider.js';
import { addRiskCommands } from './commands/risk.js';
import { addRulesCommands } from './commands/rules.js';
import { addSendCommand } from './commands/send.js';
import { addServeCommand } from './commands/serve.js';
import { addSuppressionCommands } from './commands/suppress.js';
import { addTemplateCommands } from './commands/template.js';
import { addTenantCommands } from './commands/tenant.js';
import { addWebhookCommands } from './commands/webhook.js';
import { commandContext } from './context.js';

/** package.json's version: two folders up from `src/cli/` and from `dist/cli/` alike. */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

const defaultHelp = new Help();

/** A new command tree; nothing runs until it parses. */
export function createProgram(): Command {
  const program = new Command('sluice')
    .description('Message service with exact frequency control')
    .version(packageVersion(), '-V, --version', 'print the version of sluice')
    // Commander lists a required option like any other; subcommands inherit this.
    .configureHelp({
      optionDescription: (option) => {
        const description = defaultHelp.optionDescription(option);
        return option.mandatory ? `(required) ${description}`.trim() : description;
      },
    })
    .option('-c, --config <file>', 'JSON settings file (keys are SLUICE_* names)');
  const context = commandContext(() => program.opts().config);
  for (const add of [
    addServeCommand,
    addMigrateCommand,
    addTenantCommands,
    addRulesCommands,
    addRiskCommands,
    addFraudCommands,
    addTemplateCommands,
    addBlacklistCommands,
    addSuppressionCommands,
    addBanCommands,
    addProviderCommands,
    addWebhookCommands,
    addMessagesCommands,
    addSendCommand,
    addConfigCommands,
  ])
    add(program, context);
  return program;
}
