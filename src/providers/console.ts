/**
 * The embedded demo provider: prints each message on one line instead of sending it, so a
 * developer running sluice without vendor accounts sees what would have gone out. It prints the
 * recipient and body in clear on purpose: that output is the delivery itself, not a log.
 */
import type { Channel } from '../core/channels.js';
import type { OutboundMessage, Provider, SendResult } from './provider.js';
import { defineProviderKind, type LineSink } from './provider-kind.js';

export interface ConsoleProviderOptions {
  id: string;
  channel: Channel;
  out?: LineSink;
}

export function createConsoleProvider(options: ConsoleProviderOptions): Provider {
  const out = options.out ?? process.stdout;
  return {
    id: options.id,
    kind: 'console',
    channel: options.channel,
    async send(message: OutboundMessage): Promise<SendResult> {
      out.write(`${formatLine(message)}\n`);
      return { providerMessageId: `console-${message.id}` };
    },
  };
}

function formatLine(message: OutboundMessage): string {
  const parts = [`[sluice ${message.channel}]`, `id=${message.id}`, `tenant=${message.tenantId}`, `to=${message.to}`];
  if (message.subject) parts.push(`subject=${JSON.stringify(message.subject)}`);
  if (message.template) parts.push(`template=${message.template}`);
  if (message.params && Object.keys(message.params).length > 0) parts.push(`params=${JSON.stringify(message.params)}`);
  if (message.body !== undefined) parts.push(`body=${JSON.stringify(message.body)}`);
  if (message.html !== undefined) parts.push(`html=${JSON.stringify(message.html)}`);
  return parts.join(' ');
}

/** `console`: any channel, nothing to configure; `timeoutMs` is taken as by every kind (printing has nothing to wait for). */
export const consoleKind = defineProviderKind({
  kind: 'console',
  channel: undefined,
  config: { required: [], optional: [] },
  secret: { required: [], optional: [] },
  credentialRoute: [],
  build(read, context) {
    read.timeoutMs();
    return createConsoleProvider({ id: context.id, channel: context.channel, ...(context.consoleOut ? { out: context.consoleOut } : {}) });
  },
});
