/** Sending many messages in one request: a list of messages, or a campaign (one template, many recipients). */
import { Type } from '@sinclair/typebox';
import { PRIORITIES } from '../admission/context.js';
import { stringEnum } from './common.js';
import { SendBody } from './messages.js';

/** A batch's headers: under an Idempotency-Key, message i carries `<key>#<i>`. */
export const BatchHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'Message i of the batch carries `<key>#<i>`: a replay answers the same results, sending nothing again',
    }),
  ),
});

/** Most messages one batch carries. */
export const MAX_BATCH = 1000;

const Priority = stringEnum(PRIORITIES, { description: 'transactional (default for single sends) goes before bulk (default in batches)' });

/** A campaign's recipient: its fields are a send's, so its errors read as a single send's would. */
export const Recipient = Type.Object({ to: SendBody.properties.to, params: SendBody.properties.params }, { additionalProperties: false });

const CAMPAIGN = {
  additionalProperties: false,
  description: 'A campaign: one template to many recipients, each with its own params over the shared ones',
} as const;

/** The campaign's shared fields, checked with the envelope (a bad one would fail every message). */
const campaignFields = {
  channel: SendBody.properties.channel,
  // One of the two (the route refuses neither and both).
  template: SendBody.properties.template,
  vendorTemplate: SendBody.properties.vendorTemplate,
  params: SendBody.properties.params,
  sendAt: SendBody.properties.sendAt,
  priority: Type.Optional(Priority),
  category: SendBody.properties.category,
};

const BATCH_ITEMS = { minItems: 1, maxItems: MAX_BATCH };

/**
 * What the batch route validates as a whole: the form, the campaign's shared fields, the list's
 * bounds. Each message (a {@link SendBody}) or recipient ({@link Recipient}) is validated on its
 * own, so one malformed message is refused in its result, not the batch.
 */
export const BatchEnvelope = Type.Union([
  Type.Object({ messages: Type.Array(Type.Unknown(), BATCH_ITEMS) }, { additionalProperties: false }),
  Type.Object({ ...campaignFields, recipients: Type.Array(Type.Unknown(), BATCH_ITEMS) }, CAMPAIGN),
]);

/** The batch body as /docs shows it: the envelope with what each message must be. */
export const BatchBody = Type.Union([
  Type.Object(
    {
      messages: Type.Array(
        Type.Object({ ...SendBody.properties, priority: Type.Optional(Priority) }, { additionalProperties: false }),
        BATCH_ITEMS,
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object({ ...campaignFields, recipients: Type.Array(Recipient, BATCH_ITEMS) }, CAMPAIGN),
]);

export const BatchResults = Type.Object({
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      id: Type.Optional(Type.String()),
      status: Type.Optional(Type.String()),
      dueAt: Type.Optional(Type.String()),
      deferredBy: Type.Optional(Type.String()),
      replayed: Type.Optional(Type.Boolean()),
      error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: true })),
    }),
  ),
});
