/** SMS pumping protection (admin token): a tenant's policy, the SMS prices, what the protection did (docs/fraud.md). */
import { type Static, Type } from '@sinclair/typebox';
import { CONVERSION_KEYS, FRAUD_LIMITS, FRAUD_MODES, FRAUD_RULES } from '../admission/fraud-policy.js';
import type {
  FraudPolicyView as FraudPolicyViewType,
  FraudStatusView as FraudStatusViewType,
  MessageFraudView as MessageFraudViewType,
  SmsPricesView as SmsPricesViewType,
} from '../services/views.js';
import { KEY, Nullable, stringEnum, viewOf } from './common.js';

const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166 alpha-2, upper case' });
const Countries = Type.Array(Country, { maxItems: FRAUD_LIMITS.countries });
const Digits = Type.Integer({ minimum: FRAUD_LIMITS.minDigits, maximum: FRAUD_LIMITS.maxDigits });
const WindowSeconds = Type.Integer({ minimum: 1, maximum: FRAUD_LIMITS.maxWindowSeconds });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217, e.g. USD' });

const policyFields = {
  countries: Type.Optional(
    Type.Union(
      [
        Type.Object({ allow: Countries }, { additionalProperties: false, description: 'Only these countries' }),
        Type.Object({ block: Countries }, { additionalProperties: false, description: 'Every country but these' }),
      ],
      { description: 'Where SMS may go: DESTINATION_BLOCKED (403) elsewhere' },
    ),
  ),
  prefixes: Type.Optional(
    Type.Array(
      Type.Object(
        {
          digits: Type.Integer({
            minimum: FRAUD_LIMITS.minDigits,
            maximum: FRAUD_LIMITS.maxDigits,
            description: "The prefix: the E.164 number's first digits, country code included",
          }),
          windowSeconds: WindowSeconds,
          limit: Type.Integer({ minimum: 1, maximum: FRAUD_LIMITS.maxLimit }),
        },
        { additionalProperties: false },
      ),
      { maxItems: FRAUD_LIMITS.prefixes, description: 'Velocity per number prefix: FRAUD_SUSPECTED (429) over it' },
    ),
  ),
  conversion: Type.Optional(
    Type.Object(
      {
        windowSeconds: WindowSeconds,
        minSends: Type.Integer({ minimum: 1, maximum: FRAUD_LIMITS.maxLimit }),
        minRate: Type.Number({ minimum: 0, maximum: 1, description: 'Confirmed ÷ sent' }),
        by: stringEnum(CONVERSION_KEYS),
        digits: Type.Optional(Type.Integer({ ...Digits, description: 'With by: prefix, its digits (default 8)' })),
      },
      {
        additionalProperties: false,
        description: 'A country (or prefix) that reached minSends and confirms below minRate within the window: FRAUD_SUSPECTED (429)',
      },
    ),
  ),
  monthlySpend: Type.Optional(
    Type.Object(
      { limit: Type.Number({ minimum: 0, maximum: FRAUD_LIMITS.maxSpend }), currency: Currency },
      { additionalProperties: false, description: "The cap on a calendar month's (UTC) estimated cost: SPEND_LIMIT_REACHED (429)" },
    ),
  ),
  safe: Type.Optional(
    Type.Array(Type.String({ pattern: '^\\+[1-9]\\d{0,14}$' }), {
      maxItems: FRAUD_LIMITS.safe,
      description: 'Numbers and prefixes (+ and digits) that skip velocity and conversion, not the country list',
    }),
  ),
};

export const FraudPolicyBody = Type.Object(
  {
    mode: Type.Optional(stringEnum(FRAUD_MODES, { description: 'Default monitor: records what it would refuse, refuses nothing' })),
    ...policyFields,
  },
  {
    additionalProperties: false,
    examples: [
      {
        mode: 'enforce',
        countries: { allow: ['CN', 'GB', 'US'] },
        prefixes: [{ digits: 8, windowSeconds: 3600, limit: 30 }],
        conversion: { windowSeconds: 3600, minSends: 20, minRate: 0.3, by: 'country' },
        monthlySpend: { limit: 200, currency: 'USD' },
        safe: ['+8613800138000', '+4477'],
      },
    ],
  },
);

export const FraudPolicyView = viewOf<FraudPolicyViewType>()(
  Type.Object({ mode: stringEnum(FRAUD_MODES), ...policyFields }, { description: 'What GET answers can be PUT back' }),
);
export type FraudPolicyView = Static<typeof FraudPolicyView>;

const Price = Type.Number({ minimum: 0, maximum: FRAUD_LIMITS.maxPrice });

export const SmsPricesBody = Type.Object(
  {
    currency: Currency,
    default: Type.Number({ ...Price, description: 'Per SMS, to a country not listed' }),
    countries: Type.Optional(Type.Record(Country, Price, { maxProperties: FRAUD_LIMITS.priceCountries, ...KEY })),
  },
  { additionalProperties: false, examples: [{ currency: 'USD', default: 0.05, countries: { GB: 0.04 } }] },
);

export const SmsPricesView = viewOf<SmsPricesViewType>()(
  Type.Object({ currency: Type.String(), default: Type.Number(), countries: Type.Optional(Type.Record(Type.String(), Type.Number())) }),
);
export type SmsPricesView = Static<typeof SmsPricesView>;

export const FraudStatusView = viewOf<FraudStatusViewType>()(
  Type.Object({
    mode: stringEnum(FRAUD_MODES),
    month: Type.String({ description: 'The calendar month (UTC)' }),
    spend: Type.Object({ spent: Type.Number(), limit: Nullable(Type.Number()), currency: Nullable(Type.String()) }),
    day: Type.String({ description: 'The day (UTC) the tallies count' }),
    today: Type.Array(
      Type.Object({ rule: stringEnum(FRAUD_RULES), outcome: stringEnum(['refuse', 'would_refuse'] as const), count: Type.Integer() }),
      { description: "Each rule's refusals, and would-be refusals in monitor mode, today on every instance" },
    ),
  }),
);
export type FraudStatusView = Static<typeof FraudStatusView>;

/** What SMS pumping protection left on a message (the admin timeline). */
export const MessageFraudView = viewOf<MessageFraudViewType>()(
  Type.Object(
    {
      cost: Type.Optional(Type.Number({ description: "The estimated cost charged to the tenant's month, in the prices' currency" })),
      flags: Type.Array(
        Type.Object({
          rule: stringEnum(FRAUD_RULES),
          code: stringEnum(['DESTINATION_BLOCKED', 'FRAUD_SUSPECTED', 'SPEND_LIMIT_REACHED'] as const),
          message: Type.String(),
        }),
        { description: 'What a rule in monitor mode would have refused' },
      ),
    },
    { description: 'SMS pumping protection: the cost charged and what monitor mode would have refused' },
  ),
);
