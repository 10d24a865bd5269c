/**
 * Recipient normalisation. Each channel's function answers two forms of a recipient:
 * - `recipient`, where the message is delivered: the address as written, tidied only where the
 *   medium does not care (trimmed, an email's domain lower-cased, a URL as the URL parser writes it);
 * - `key`, the canonical form that frequency rules and blacklists are keyed on: every spelling
 *   that reaches the same mailbox, number or hook has one key, so none can dodge them (docs/api.md,
 *   "Recipients").
 *
 * Keys of different channels never coincide: a phone's starts with `+` (nothing else does), an
 * email's has `@` and no `:`, a bot name's neither `@` nor `+`, a URL's has `://`. So one
 * blacklist entry for every channel (`*`) can hold each channel's key side by side.
 */
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { CHANNELS, type Channel } from './channels.js';

/**
 * A normaliser's answer. `region` (phones only) is the number's country as libphonenumber reads it
 * (ISO 3166 alpha-2, `GB`; absent for a non-geographic number such as `+800`), from the parse
 * that validated it, so SMS pumping protection needs no second parse.
 */
export type NormalizeResult = { ok: true; recipient: string; key: string; region?: string } | { ok: false; reason: string };

/**
 * A phone number in E.164 (`+8613800138000`), its key too; numbers without `+` are read in
 * `defaultRegion` (none: only numbers with `+country` are read).
 */
export function normalizePhone(input: string, defaultRegion: string | undefined): NormalizeResult {
  const phone = parsePhoneNumberFromString(input, defaultRegion as CountryCode | undefined);
  if (!phone?.isValid()) return { ok: false, reason: `"${input.slice(0, 40)}" is not a valid phone number` };
  const region = phone.country;
  return region
    ? { ok: true, recipient: phone.number, key: phone.number, region }
    : { ok: true, recipient: phone.number, key: phone.number };
}

const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/;
const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Mail providers whose mailboxes ignore more of an address than case and a `+tag`: the domain a
 * key is written with, and whether dots in the local part count. Listed in docs/api.md.
 */
export const EMAIL_PROVIDER_FORMS: Readonly<Record<string, { domain: string; ignoresDots: boolean }>> = {
  'gmail.com': { domain: 'gmail.com', ignoresDots: true },
  'googlemail.com': { domain: 'gmail.com', ignoresDots: true },
};

/**
 * An email address with its domain lower-cased; delivered with its local part as written (RFC 5321
 * lets a server tell cases apart). Its key folds the local part's case and drops a `+tag`, as every
 * mainstream provider delivers those to one mailbox, then applies {@link EMAIL_PROVIDER_FORMS}.
 * Quoted local parts and IP literals are refused: no mail provider hands them out.
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
  return { ok: true, recipient: `${local}@${domain}`, key: emailKey(local, domain) };
}

function emailKey(local: string, domain: string): string {
  let mailbox = local.toLowerCase();
  const plus = mailbox.indexOf('+');
  // A `+` first is the whole name, not a tag.
  if (plus > 0) mailbox = mailbox.slice(0, plus);
  const provider = EMAIL_PROVIDER_FORMS[domain];
  if (!provider) return `${mailbox}@${domain}`;
  if (provider.ignoresDots) mailbox = mailbox.replaceAll('.', '') || mailbox;
  return `${mailbox}@${provider.domain}`;
}

const WEBHOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** The longest normalised recipient: the API's limit on `to`, well inside the column and the limiter's subject. */
export const MAX_RECIPIENT_LENGTH = 320;

/**
 * A webhook target: the name of a bot or endpoint (`ops-alerts`), or an http(s) URL. URLs are
 * delivered as the URL parser writes them (lower-cased host, default port dropped), names as
 * written. Keys fold a name's case; a URL's drop the fragment (never sent to the server) and an
 * empty query, decode percent-encoded unreserved characters (RFC 3986 §6.2.2.2: `%78` is `x`) and
 * upper-case the hex of the other escapes.
 */
export function normalizeWebhookTarget(input: string): NormalizeResult {
  const text = input.trim();
  if (WEBHOOK_NAME.test(text)) return { ok: true, recipient: text, key: text.toLowerCase() };
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
      return { ok: true, recipient, key: webhookUrlKey(url) };
    }
  } catch {
    // fall through
  }
  return { ok: false, reason: 'a webhook target is a bot name ([A-Za-z0-9_.:-], at most 128) or an http(s) URL' };
}

const UNRESERVED = /^[A-Za-z0-9._~-]$/;

const decodeUnreserved = (text: string) =>
  text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });

function webhookUrlKey(parsed: URL): string {
  const url = new URL(parsed.href);
  url.hash = '';
  url.username = decodeUnreserved(url.username);
  url.password = decodeUnreserved(url.password);
  // Set again: the parser then removes the dot segments a decoded `%2E` may have made.
  url.pathname = decodeUnreserved(url.pathname);
  // An empty search setter drops a bare `?` as well.
  url.search = decodeUnreserved(url.search);
  return url.href;
}

export function normalizeRecipient(channel: Channel, input: string, defaultRegion: string | undefined): NormalizeResult {
  switch (channel) {
    case 'sms':
      return normalizePhone(input, defaultRegion);
    case 'email':
      return normalizeEmail(input);
    case 'webhook':
      return normalizeWebhookTarget(input);
  }
}

/** A recipient as read by one channel's normaliser. */
export interface ChannelReading {
  channel: Channel;
  recipient: string;
  key: string;
}

/**
 * A recipient given for every channel (a blacklist entry on `*`): its reading by each channel
 * whose normaliser accepts it, so it matches a send on any of them; empty when none does.
 * `13800138002` is a phone number and a bot name; `Bob@example.com` only an email address.
 */
export function readOnEveryChannel(input: string, defaultRegion: string | undefined): ChannelReading[] {
  const readings: ChannelReading[] = [];
  for (const channel of CHANNELS) {
    const result = normalizeRecipient(channel, input, defaultRegion);
    if (result.ok) readings.push({ channel, recipient: result.recipient, key: result.key });
  }
  return readings;
}
