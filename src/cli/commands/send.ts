/** `sluice send`: one message through the running service's API, so its limiter counts it like any other. */
import type { Command } from 'commander';
import { CHANNELS, type Channel } from '../../core/channels.js';
import { channelArg, oneOf, sendAtArg } from '../arguments.js';
import type { CommandContext } from '../context.js';
import { callService, serviceBase } from '../service-call.js';

interface SendOptions {
  key: string;
  channel: Channel;
  to: string;
  url?: string;
  template?: string;
  vendorTemplate?: string;
  param?: string[];
  subject?: string;
  body?: string;
  html?: string;
  sendAt?: string | number;
  idempotencyKey?: string;
}

/** `name=value` pairs → params; the value is everything after the first `=`. */
const paramsOf = (pairs: string[] | undefined) =>
  pairs ? Object.fromEntries(pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)])) : undefined;

export function addSendCommand(program: Command, context: CommandContext): void {
  program
    .command('send')
    .description(
      'Send a message through the running service (POST /v1/messages), so its limiter counts it like any other: ' +
        'the embedded default keeps recipient counts in the serving process',
    )
    .requiredOption('--key <apiKey>', 'tenant API key (or SLUICE_API_KEY)', process.env.SLUICE_API_KEY)
    .requiredOption('--channel <channel>', oneOf(CHANNELS), channelArg)
    .requiredOption('--to <recipient>')
    .option('--url <url>', 'base URL of the service (default: http://SLUICE_HOST:SLUICE_PORT)')
    .option('--template <name>', 'a template stored for the tenant and channel')
    .option('--vendor-template <code>', "sms: the vendor's template code (Aliyun TemplateCode, Tencent TemplateId)")
    .option('--param <name=value...>', 'template parameter (repeatable)')
    .option('--subject <subject>')
    .option('--body <body>')
    .option('--html <html>')
    .option('--send-at <time>', 'when to send: ISO 8601 with an offset (2026-12-04T14:19:00+08:00) or epoch milliseconds', sendAtArg)
    .option('--idempotency-key <key>')
    .action(async (options: SendOptions) => {
      const base = serviceBase(context, options.url);
      const body = {
        channel: options.channel,
        to: options.to,
        template: options.template,
        vendorTemplate: options.vendorTemplate,
        params: paramsOf(options.param),
        subject: options.subject,
        body: options.body,
        html: options.html,
        sendAt: options.sendAt,
      };
      const answer = await callService<{ id: string; status: string }>(base, {
        method: 'POST',
        path: '/v1/messages',
        key: options.key,
        body,
        ...(options.idempotencyKey ? { headers: { 'Idempotency-Key': options.idempotencyKey } } : {}),
      });
      console.log(JSON.stringify(answer));
    });
}
