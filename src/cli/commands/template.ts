/** `sluice template`: store, show, list and retire a tenant channel's message templates. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { TemplateSpec } from '../../admission/templates.js';
import { TemplateBody } from '../../api/templates.js';
import { SluiceError } from '../../core/errors.js';
import { channelArg, collect } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { checkBody } from '../validation.js';

interface SetOptions {
  file?: string;
  json?: string;
  body?: string;
  subject?: string;
  html?: string;
  param: string[];
  vendor: string[];
}

/** `NAME:TYPE[:MAX_LENGTH]`, e.g. `code:string:8`. */
function parseParam(spec: string): [string, TemplateSpec['params'][string]] {
  const [name, type = 'string', maxLength] = spec.split(':');
  if (!name || (type !== 'string' && type !== 'number'))
    throw new SluiceError('INVALID_REQUEST', `--param ${spec}: give NAME:TYPE[:MAX_LENGTH], TYPE string or number`);
  return [name, { type, ...(maxLength ? { maxLength: Number(maxLength) } : {}) }];
}

/** `PROVIDER_OR_KIND:TEMPLATE_CODE[:SIGN_NAME]`, e.g. `aliyun-sms:SMS_123:Shop`. */
function parseVendor(spec: string): [string, { templateCode: string; signName?: string }] {
  const [key, templateCode, signName] = spec.split(':');
  if (!key || !templateCode) throw new SluiceError('INVALID_REQUEST', `--vendor ${spec}: give PROVIDER_OR_KIND:TEMPLATE_CODE[:SIGN_NAME]`);
  return [key, { templateCode, ...(signName ? { signName } : {}) }];
}

function specOf(options: SetOptions): unknown {
  if (options.file !== undefined || options.json !== undefined) {
    const text = options.file !== undefined ? readFileSync(options.file === '-' ? 0 : options.file, 'utf8') : options.json!;
    try {
      return JSON.parse(text);
    } catch {
      throw new SluiceError('INVALID_REQUEST', 'the template is not valid JSON');
    }
  }
  return {
    params: Object.fromEntries(options.param.map(parseParam)),
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.subject === undefined ? {} : { subject: options.subject }),
    ...(options.html === undefined ? {} : { html: options.html }),
    ...(options.vendor.length ? { vendor: Object.fromEntries(options.vendor.map(parseVendor)) } : {}),
  };
}

export function addTemplateCommands(program: Command, context: CommandContext): void {
  const template = program.command('template').description("Store, show, list and retire a tenant channel's message templates");
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  template
    .command('set <tenantId> <channel> <name>')
    .description(
      'Store a new version, e.g.: template set TENANT sms otp --param code:string:8 --body "Your code is {{code}}" --vendor aliyun-sms:SMS_123:Shop ' +
        '(or the API body as --json or --file, - for stdin)',
    )
    .option('--file <path>', 'the template as JSON (the PUT body); - reads stdin')
    .option('--json <text>', 'the template as JSON (the PUT body)')
    .option('--body <text>', 'the text: SMS, chat, the email text part ({{param}} placeholders)')
    .option('--subject <text>', 'email subject')
    .option('--html <text>', 'email HTML part (params are HTML-escaped)')
    .option('--param <spec>', 'NAME:TYPE[:MAX_LENGTH]; repeat for more', collect, [])
    .option('--vendor <spec>', 'SMS: PROVIDER_OR_KIND:TEMPLATE_CODE[:SIGN_NAME]; repeat for more', collect, [])
    .action((tenantId: string, channel: string, name: string, options: SetOptions) =>
      context.withService('templates', async (templates) => {
        const spec = await checkBody(TemplateBody, specOf(options) as TemplateSpec);
        print(await templates.putTemplate(tenantId, channelArg(channel), name, spec));
      }),
    );
  template
    .command('show <tenantId> <channel> <name>')
    .description('Every version, newest first')
    .action((tenantId: string, channel: string, name: string) =>
      context.withService('templates', async (templates) => print(await templates.templateVersions(tenantId, channelArg(channel), name))),
    );
  template
    .command('list <tenantId> [channel]')
    .description('The current version of every live template')
    .action((tenantId: string, channel: string | undefined) =>
      context.withService('templates', async (templates) =>
        print(await templates.listTemplates(tenantId, channel === undefined ? undefined : channelArg(channel))),
      ),
    );
  template
    .command('remove <tenantId> <channel> <name>')
    .description('Retire the template (a later set makes it live again)')
    .action((tenantId: string, channel: string, name: string) =>
      context.withService('templates', async (templates) => {
        if (!(await templates.retireTemplate(tenantId, channelArg(channel), name)))
          throw new SluiceError('NOT_FOUND', `no live ${channel} template named "${name}"`);
        print({ channel, name, retired: true });
      }),
    );
}
