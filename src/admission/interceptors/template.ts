import { isChannel } from '../../core/channels.js';
import { SluiceError } from '../../core/errors.js';
import type { Interceptor } from '../chain.js';
import type { TemplateLookup } from '../ports.js';
import { renderTemplate, TEMPLATE_NAME } from '../templates.js';

const STORABLE = new RegExp(TEMPLATE_NAME);

/**
 * A send naming a template stored for its tenant and channel is rendered with the template's
 * current version, which the message then pins (`context.rendered`, stored in its payload): a
 * later change of the template never alters an accepted message. Params are checked against the
 * template (400 naming the param); a rendered text is held to its inline limit (400 naming it),
 * and in a batch the renders together to the batch's budget (413). A name with no stored template
 * is a 404 NOT_FOUND on every channel: a misspelled name must not be sent with no text. A vendor's
 * own template code is `vendorTemplate` (SMS only), passed through to the provider with the params.
 */
export function templateInterceptor(templates: TemplateLookup): Interceptor {
  return {
    name: 'template',
    async run(context) {
      const { template, vendorTemplate, channel } = context.request;
      if (vendorTemplate !== undefined) {
        if (template !== undefined)
          throw new SluiceError('INVALID_REQUEST', "give `template` (stored) or `vendorTemplate` (the vendor's code), not both", {
            details: { field: 'vendorTemplate' },
          });
        if (channel !== 'sms')
          throw new SluiceError('INVALID_REQUEST', "`vendorTemplate` is an SMS vendor's template code: only for sms", {
            details: { field: 'vendorTemplate' },
          });
      }
      if (typeof template !== 'string' || template.length === 0 || !isChannel(channel)) return undefined;
      // A name no template can have is not looked up (nor sent to SQL, which may refuse its bytes).
      const stored = STORABLE.test(template) ? await templates.current(context.tenant!.id, channel, template) : undefined;
      if (!stored) {
        const hint = channel === 'sms' ? " (a vendor's template code goes in `vendorTemplate`)" : '';
        throw new SluiceError('NOT_FOUND', `no ${channel} template named ${JSON.stringify(template.slice(0, 128))}${hint}`, {
          details: { field: 'template' },
        });
      }
      const request = context.request;
      for (const field of ['subject', 'body', 'html'] as const) {
        if (request[field] !== undefined)
          throw new SluiceError('INVALID_REQUEST', `\`${field}\` comes from the template "${template}": leave it out`, {
            details: { field },
          });
      }
      const rendered = renderTemplate(stored, request.params);
      context.renderBudget?.take(rendered);
      context.rendered = rendered;
      return undefined;
    },
  };
}
