import { isChannel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import { normalizeRecipient } from '../../core/recipients.js';
import type { Interceptor } from '../chain.js';
import { PRIORITIES, type ValidatedMessage } from '../context.js';

export interface ValidationOptions {
  defaultRegion: string;
  /** How far ahead `sendAt` may be, in ms. */
  scheduleHorizonMs: number;
  /** A `sendAt` this close to now (or slightly past it, clock skew) is an immediate send. */
  immediateSlackMs?: number;
}

/** A send's category: the tenant's own word, kept short and plain (it is a key of suppressions). */
export const CATEGORY = /^[A-Za-z0-9._:-]{1,64}$/;

const has = (text: string | undefined) => typeof text === 'string' && text.length > 0;

const invalid = (message: string, field: string) => new SluiceError('INVALID_REQUEST', message, { details: { field } });

/**
 * What makes a message sendable on its channel: a normalised recipient, the content the channel
 * needs, and a due time within the horizon. Shapes and sizes are checked earlier (HTTP schema);
 * this step checks meaning, for every entry point.
 */
export function validationInterceptor(options: ValidationOptions): Interceptor {
  const slack = options.immediateSlackMs ?? 1000;
  return {
    name: 'validation',
    run(context) {
      const request = context.request;
      // A stored template supplies the content (template.ts rendered it); the rest is the request's.
      const content = context.rendered ?? request;
      if (!isChannel(request.channel))
        throw invalid(`unknown channel "${String(request.channel).slice(0, 20)}": use sms, email or webhook`, 'channel');
      const channel = request.channel;
      if (typeof request.to !== 'string' || !request.to.trim()) throw invalid('`to` is required', 'to');
      const normalized = normalizeRecipient(channel, request.to, options.defaultRegion);
      if (!normalized.ok) throw invalid(normalized.reason, 'to');

      if (channel === 'sms' && !has(request.template) && !has(request.vendorTemplate) && !has(content.body))
        throw invalid('sms needs `template` (with `params`), `vendorTemplate` or `body`', 'template');
      if (channel === 'email' && (!has(content.subject) || (!has(content.body) && !has(content.html)))) {
        throw invalid('email needs `subject` and `body` or `html`, or a stored `template`', has(content.subject) ? 'body' : 'subject');
      }
      if (channel === 'webhook' && !has(content.body)) throw invalid('webhook needs `body`, or a stored `template`', 'body');
      if (request.params !== undefined && channel !== 'sms' && !has(request.template)) {
        throw invalid('`params` go with a `template`', 'params');
      }

      let dueAt = context.now;
      let scheduled = false;
      if (request.sendAt !== undefined) {
        const at = typeof request.sendAt === 'number' ? request.sendAt : Date.parse(request.sendAt);
        if (!Number.isFinite(at) || (typeof request.sendAt === 'string' && !/^\d{4}-\d{2}-\d{2}T/.test(request.sendAt))) {
          throw invalid('`sendAt` must be an ISO 8601 date-time with a time zone, or epoch milliseconds', 'sendAt');
        }
        if (at < context.now - slack) {
          // Epoch seconds are the common slip: now in seconds is some 1,000 times smaller than in ms.
          const inSeconds = typeof request.sendAt === 'number' && Math.abs(at * 1000 - context.now) < options.scheduleHorizonMs;
          throw invalid(
            inSeconds
              ? '`sendAt` is in the past: it looks like epoch seconds; give epoch milliseconds or an ISO 8601 date-time'
              : '`sendAt` is in the past',
            'sendAt',
          );
        }
        if (at > context.now + options.scheduleHorizonMs) {
          throw invalid(`\`sendAt\` is more than ${Math.round(options.scheduleHorizonMs / 86_400_000)} days ahead`, 'sendAt');
        }
        if (at > context.now + slack) {
          dueAt = at;
          scheduled = true;
        }
      }
      const rendered = context.rendered;
      const payload: ValidatedMessage['payload'] = rendered
        ? {
            params: rendered.params,
            subject: rendered.subject,
            body: rendered.body,
            html: rendered.html,
            stored: { name: rendered.name, version: rendered.version },
            vendor: rendered.vendor,
          }
        : // The payload's `template` is the vendor's code the provider sends through (a stored template was rendered above).
          { template: request.vendorTemplate, params: request.params, subject: request.subject, body: request.body, html: request.html };
      if (request.category !== undefined) {
        const category = request.category;
        if (typeof category !== 'string' || !CATEGORY.test(category))
          throw invalid('`category` is 1 to 64 letters, digits and . _ : - (not `*`)', 'category');
        payload.category = category;
      }
      const priority = request.priority ?? 'transactional';
      if (!PRIORITIES.includes(priority)) throw invalid('`priority` is transactional or bulk', 'priority');
      context.message = {
        channel,
        recipient: normalized.recipient,
        recipientKey: normalized.key,
        payload,
        priority,
        dueAt,
        scheduled,
        region: normalized.region,
      };
      return undefined;
    },
  };
}
