/**
 * Recipient normalisation: one recipient has one spelling, so frequency rules and blacklists
 * cannot be dodged by writing a number or an address differently.
 */
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { Channel } from '../channels.js';

export type NormalizeResult = { ok: true; recipient: string } | { ok: false; reason: string };

/** A phone number in E.164 (`+8613800138000`); numbers without `+` are read in `defaultRegion`. */
export function normalizePhone(input: string, defaultRegion: string): NormalizeResult {
  const phone = parsePhoneNumberFromString(input, defaultRegion as CountryCode);
  if (!phone?.isValid()) return { ok: false, reason: `"${input.slice(0, 40)}" is not a valid phone number` };
  return { ok: true, recipient: phone.number };
}

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * An email address with its domain lower-cased (the local part is case-sensitive by RFC 5321, so it
 * is kept). Quoted local parts and IP literals are refused: no mail provider hands them out.
 */
export function normalizeEmail(input: string): NormalizeResult {
  const text = input.trim();
  const at = text.lastIndexOf('@');
  const bad = { ok: false, reason: `"${text.slice(0, 40)}" is not a valid email address` } as const;
  if (at < 1 || text.length > 254) return bad;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1).toLowerCase();
  if (local.length > 64 || !LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return bad;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label)) || /^[0-9]+$/.test(labels.at(-1) ?? '')) return bad;
  return { ok: true, recipient: `${local}@${domain}` };
}

const WEBHOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** The longest normalised recipient: the API's limit on `to`, well inside the column and the limiter's subject. */
export const MAX_RECIPIENT_LENGTH = 320;

/**
 * A webhook target: the name of a bot or endpoint configured as a provider (`ops-alerts`), or an
 * https URL. URLs are normalised by the URL parser (lower-cased host, default port dropped).
 */
export function normalizeWebhookTarget(input: string): NormalizeResult {
  const text = input.trim();
  if (WEBHOOK_NAME.test(text)) return { ok: true, recipient: text };
  try {
    const url = new URL(text);
    if (url.protocol === 'https:' || url.protocol === 'http:') {
      // Percent-encoding can make a URL several times longer than it was written; what is stored,
      // counted and blacklisted is the normalised form, so that is what must fit.
      const recipient = url.toString();
      if (recipient.length > MAX_RECIPIENT_LENGTH)
        return {
          ok: false,
          reason: `the URL is ${recipient.length} characters once normalised (percent-encoded); at most ${MAX_RECIPIENT_LENGTH}`,
        };
      return { ok: true, recipient };
    }
  } catch {
    // fall through
  }
  return { ok: false, reason: 'a webhook target is a bot name ([A-Za-z0-9_.:-], at most 128) or an http(s) URL' };
}

export function normalizeRecipient(channel: Channel, input: string, defaultRegion: string): NormalizeResult {
  switch (channel) {
    case 'sms':
      return normalizePhone(input, defaultRegion);
    case 'email':
      return normalizeEmail(input);
    case 'webhook':
      return normalizeWebhookTarget(input);
  }
}
