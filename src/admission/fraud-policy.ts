/**
 * SMS pumping protection's policy (docs/fraud.md): what a tenant's policy and the SMS prices may
 * hold, their checks, and the compiled form the `fraud` step reads on every send. The names are
 * the wire's (`PUT /v1/admin/tenants/:id/fraud/sms`); bounds keep what a tenant controls cheap.
 */
import { isCountryCode } from '../core/countries.js';
import { type ErrorCode, SluiceError } from '../core/errors.js';
import type { Rule } from '../limiter/index.js';

export const FRAUD_MODES = ['enforce', 'monitor'] as const;
export type FraudMode = (typeof FRAUD_MODES)[number];

/** The rules, in the order a send meets them; the `rule` label of `sluice_fraud_decisions_total`. */
export const FRAUD_RULES = ['country', 'prefix', 'conversion', 'spend'] as const;
export type FraudRule = (typeof FRAUD_RULES)[number];

/** What one rule decided on one send: the `outcome` label (`would_refuse`: monitor mode). */
export const FRAUD_OUTCOMES = ['pass', 'refuse', 'would_refuse'] as const;
export type FraudOutcome = (typeof FRAUD_OUTCOMES)[number];

export const CONVERSION_KEYS = ['country', 'prefix'] as const;
export type ConversionKey = (typeof CONVERSION_KEYS)[number];

/** What a policy may hold: a tenant's policy is read on each of its sends, so its size is bounded. */
export const FRAUD_LIMITS = {
  countries: 250,
  prefixes: 8,
  safe: 1000,
  minDigits: 2,
  maxDigits: 15,
  /** 31 days: a window longer than a month answers no pumping question a month's cap does not. */
  maxWindowSeconds: 2_678_400,
  maxLimit: 1_000_000,
  /** Per SMS, and per month in the currency's units. */
  maxPrice: 1000,
  maxSpend: 1_000_000_000,
  priceCountries: 300,
} as const;

export interface PrefixVelocity {
  /** The prefix: the E.164 number's first `digits` digits, country code included. */
  digits: number;
  windowSeconds: number;
  /** Admitted sends to one prefix within the window. */
  limit: number;
}

export interface ConversionRule {
  windowSeconds: number;
  /** Sends of a country (or prefix) within the window before its rate is judged. */
  minSends: number;
  /** Confirmed ÷ sent within the window, 0 to 1. */
  minRate: number;
  by: ConversionKey;
  /** With `by: prefix`: the prefix's digits (default 8). */
  digits?: number;
}

/** A tenant's SMS fraud policy as PUT takes it and GET answers it (`mode` filled in). */
export interface FraudPolicy {
  mode: FraudMode;
  countries?: { allow: string[] } | { block: string[] };
  prefixes?: PrefixVelocity[];
  conversion?: ConversionRule;
  monthlySpend?: { limit: number; currency: string };
  /** `+` and digits: each entry matches every number it begins, a whole number itself. */
  safe?: string[];
}

/** What an SMS is estimated to cost, per recipient country (`default` elsewhere), in `currency`. */
export interface SmsPrices {
  currency: string;
  default: number;
  countries?: Record<string, number>;
}

/** A line on a message's timeline: what a rule in monitor mode would have refused. */
export interface FraudFlag {
  rule: FraudRule;
  code: Extract<ErrorCode, 'DESTINATION_BLOCKED' | 'FRAUD_SUSPECTED' | 'SPEND_LIMIT_REACHED'>;
  message: string;
}

/** The conversion default prefix length: a typical number range (`+44 7700 90`). */
export const DEFAULT_CONVERSION_DIGITS = 8;

const SAFE_ENTRY = /^\+[1-9]\d{0,14}$/;
const CURRENCY = /^[A-Z]{3}$/;

const invalid = (message: string, field: string) => new SluiceError('INVALID_REQUEST', message, { details: { field } });

function checkInteger(value: number, min: number, max: number, field: string): void {
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(`${field} must be an integer from ${min} to ${max}`, field);
}

function checkCountries(codes: readonly string[], field: string): string[] {
  if (codes.length > FRAUD_LIMITS.countries) throw invalid(`at most ${FRAUD_LIMITS.countries} countries`, field);
  codes.forEach((code, index) => {
    if (!isCountryCode(code)) throw invalid(`"${code.slice(0, 8)}" is not an ISO 3166 alpha-2 country code`, `${field}[${index}]`);
  });
  return [...new Set(codes)].sort();
}

/** Whether `amount` (a price or a cap) is a whole number of millionths: money is counted in integers. */
const hasMicros = (amount: number) => Math.abs(amount * 1e6 - Math.round(amount * 1e6)) < 1e-6;

function checkAmount(amount: number, max: number, field: string): void {
  if (!Number.isFinite(amount) || amount < 0 || amount > max || !hasMicros(amount)) {
    throw invalid(`${field} must be from 0 to ${max} with at most 6 decimals`, field);
  }
}

/**
 * Checks a policy's meaning (the schema checked its shape) and answers it as stored: `mode`
 * defaults to `monitor` (see what would be refused before refusing it), country lists are sorted
 * and without repeats. INVALID_REQUEST naming the field.
 */
export function checkFraudPolicy(input: Omit<FraudPolicy, 'mode'> & { mode?: FraudMode }): FraudPolicy {
  const policy: FraudPolicy = { mode: input.mode ?? 'monitor' };
  if (!FRAUD_MODES.includes(policy.mode)) throw invalid('mode is enforce or monitor', 'mode');
  if (input.countries) {
    const lists = input.countries as { allow?: string[]; block?: string[] };
    if ((lists.allow === undefined) === (lists.block === undefined))
      throw invalid('countries is {allow: [...]} or {block: [...]}', 'countries');
    policy.countries = lists.allow
      ? { allow: checkCountries(lists.allow, 'countries.allow') }
      : { block: checkCountries(lists.block!, 'countries.block') };
  }
  if (input.prefixes) {
    if (input.prefixes.length > FRAUD_LIMITS.prefixes) throw invalid(`at most ${FRAUD_LIMITS.prefixes} prefix rules`, 'prefixes');
    const seen = new Set<string>();
    policy.prefixes = input.prefixes.map((rule, index) => {
      const field = `prefixes[${index}]`;
      checkInteger(rule.digits, FRAUD_LIMITS.minDigits, FRAUD_LIMITS.maxDigits, `${field}.digits`);
      checkInteger(rule.windowSeconds, 1, FRAUD_LIMITS.maxWindowSeconds, `${field}.windowSeconds`);
      checkInteger(rule.limit, 1, FRAUD_LIMITS.maxLimit, `${field}.limit`);
      const key = `${rule.digits}:${rule.windowSeconds}`;
      if (seen.has(key)) throw invalid('another rule has the same digits and window', field);
      seen.add(key);
      return { digits: rule.digits, windowSeconds: rule.windowSeconds, limit: rule.limit };
    });
  }
  if (input.conversion) {
    const rule = input.conversion;
    checkInteger(rule.windowSeconds, 1, FRAUD_LIMITS.maxWindowSeconds, 'conversion.windowSeconds');
    checkInteger(rule.minSends, 1, FRAUD_LIMITS.maxLimit, 'conversion.minSends');
    if (!(typeof rule.minRate === 'number' && rule.minRate >= 0 && rule.minRate <= 1))
      throw invalid('conversion.minRate must be from 0 to 1', 'conversion.minRate');
    if (!CONVERSION_KEYS.includes(rule.by)) throw invalid('conversion.by is country or prefix', 'conversion.by');
    if (rule.digits !== undefined) {
      if (rule.by !== 'prefix') throw invalid('conversion.digits goes with by: prefix', 'conversion.digits');
      checkInteger(rule.digits, FRAUD_LIMITS.minDigits, FRAUD_LIMITS.maxDigits, 'conversion.digits');
    }
    policy.conversion = {
      windowSeconds: rule.windowSeconds,
      minSends: rule.minSends,
      minRate: rule.minRate,
      by: rule.by,
      ...(rule.by === 'prefix' ? { digits: rule.digits ?? DEFAULT_CONVERSION_DIGITS } : {}),
    };
  }
  if (input.monthlySpend) {
    checkAmount(input.monthlySpend.limit, FRAUD_LIMITS.maxSpend, 'monthlySpend.limit');
    if (!CURRENCY.test(input.monthlySpend.currency)) throw invalid('an ISO 4217 code: three capital letters', 'monthlySpend.currency');
    policy.monthlySpend = { limit: input.monthlySpend.limit, currency: input.monthlySpend.currency };
  }
  if (input.safe) {
    if (input.safe.length > FRAUD_LIMITS.safe) throw invalid(`at most ${FRAUD_LIMITS.safe} safe entries`, 'safe');
    input.safe.forEach((entry, index) => {
      if (!SAFE_ENTRY.test(entry))
        throw invalid('a safe entry is + and 1 to 15 digits (a number, or the prefix of some)', `safe[${index}]`);
    });
    policy.safe = [...new Set(input.safe)];
  }
  return policy;
}

/** Checks the SMS prices: a currency, amounts of at most 6 decimals, known country codes. */
export function checkSmsPrices(input: SmsPrices): SmsPrices {
  if (!CURRENCY.test(input.currency)) throw invalid('an ISO 4217 code: three capital letters', 'currency');
  checkAmount(input.default, FRAUD_LIMITS.maxPrice, 'default');
  const countries = Object.entries(input.countries ?? {});
  if (countries.length > FRAUD_LIMITS.priceCountries) throw invalid(`at most ${FRAUD_LIMITS.priceCountries} countries`, 'countries');
  for (const [code, price] of countries) {
    if (!isCountryCode(code))
      throw invalid(`"${code.slice(0, 8)}" is not an ISO 3166 alpha-2 country code`, `countries.${code.slice(0, 8)}`);
    checkAmount(price, FRAUD_LIMITS.maxPrice, `countries.${code}`);
  }
  return { currency: input.currency, default: input.default, ...(input.countries ? { countries: { ...input.countries } } : {}) };
}

/** An amount in millionths of its currency: money is added and compared in integers. */
export const toMicros = (amount: number): number => Math.round(amount * 1e6);
export const fromMicros = (micros: number): number => micros / 1e6;

/** The calendar month (UTC) spend is kept under: `2026-12` (as `SmsSpendRepository` reads a message's month). */
export const utcMonth = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** When the calendar month (UTC) after the one holding `ms` starts. */
export function nextMonthStart(ms: number): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The prefix a rule of `digits` counts: the E.164 number's first digits, country code included (the whole number when shorter). */
export const prefixOf = (e164: string, digits: number): string => e164.slice(1, 1 + digits);

/** A non-geographic number's key where a country is needed (`+800`, `+882`…): the region code libphonenumber uses for them. */
export const NON_GEOGRAPHIC = '001';

/** A policy as the `fraud` step reads it, made once per cached policy. */
export interface CompiledFraudPolicy {
  mode: FraudMode;
  enforce: boolean;
  countries: { allow: boolean; codes: ReadonlySet<string> } | undefined;
  /** Rules of one `digits` share a subject: one limiter check per distinct length. */
  prefixGroups: { digits: number; rules: Rule[] }[];
  conversion: (ConversionRule & { windowMs: number; baseRules: Rule[]; countRules: Rule[] }) | undefined;
  spendCapMicros: number | undefined;
  currency: string | undefined;
  /** The safe entries: a number is safe when one of them begins it. */
  safe: ReadonlySet<string>;
}

const compiled = new WeakMap<FraudPolicy, CompiledFraudPolicy>();

/** The compiled form of a cached policy: memoised by identity (the live cache hands out one object until it changes). */
export function compileFraudPolicy(policy: FraudPolicy): CompiledFraudPolicy {
  let result = compiled.get(policy);
  if (result) return result;
  const groups = new Map<number, Rule[]>();
  for (const rule of policy.prefixes ?? []) {
    const rules = groups.get(rule.digits) ?? [];
    rules.push({ windowMs: rule.windowSeconds * 1000, limit: rule.limit });
    groups.set(rule.digits, rules);
  }
  const conversion = policy.conversion;
  result = {
    mode: policy.mode,
    enforce: policy.mode === 'enforce',
    countries: policy.countries
      ? 'allow' in policy.countries
        ? { allow: true, codes: new Set(policy.countries.allow) }
        : { allow: false, codes: new Set(policy.countries.block) }
      : undefined,
    prefixGroups: [...groups].map(([digits, rules]) => ({ digits, rules })),
    conversion: conversion && {
      ...conversion,
      windowMs: conversion.windowSeconds * 1000,
      baseRules: [{ windowMs: conversion.windowSeconds * 1000, limit: conversion.minSends }],
      countRules: [{ windowMs: conversion.windowSeconds * 1000, limit: 1_000_000_000 }],
    },
    spendCapMicros: policy.monthlySpend ? toMicros(policy.monthlySpend.limit) : undefined,
    currency: policy.monthlySpend?.currency,
    safe: new Set(policy.safe ?? []),
  };
  compiled.set(policy, result);
  return result;
}

/** Whether a number is on the policy's safe list: one of its numbers, or begun by one of its prefixes. */
export function isSafe(policy: CompiledFraudPolicy, e164: string): boolean {
  if (policy.safe.size === 0) return false;
  // At most 15 lookups: an E.164 number has at most 15 digits.
  for (let end = 2; end <= e164.length; end++) if (policy.safe.has(e164.slice(0, end))) return true;
  return false;
}

/** Whether the country list lets a number of `region` (undefined: non-geographic) through. */
export function countryAllowed(policy: CompiledFraudPolicy, region: string | undefined): boolean {
  if (!policy.countries) return true;
  const listed = region !== undefined && policy.countries.codes.has(region);
  return policy.countries.allow ? listed : !listed;
}

/**
 * The most sends a conversion key may hold in its window given `confirmed` confirmations: it is
 * refused once it holds `minSends` and converts below `minRate`, i.e. a send is admitted while
 * `sends < max(minSends, ⌊confirmed ÷ minRate⌋ + 1)`. No limit when `minRate` is 0.
 */
export function conversionLimit(rule: ConversionRule, confirmed: number): number {
  if (rule.minRate === 0) return 1_000_000_000;
  // The epsilon keeps 3 ÷ 0.3 at 10, not 9.999…
  const byRate = Math.floor(confirmed / rule.minRate + 1e-9) + 1;
  return Math.min(1_000_000_000, Math.max(rule.minSends, byRate));
}

/** An SMS's estimated cost to `region` in millionths of the prices' currency. */
export function priceMicros(prices: SmsPrices, region: string | undefined): number {
  const price = region === undefined ? undefined : prices.countries?.[region];
  return toMicros(price ?? prices.default);
}
