/**
 * Message templates: what an admin stores per tenant and channel, how a send's params are checked
 * against it, and how its text is rendered. Rendering is Mustache (logic-less: variables and
 * sections, no code), with no partials. `html` is rendered with Mustache's HTML escaping, so a
 * param can never inject markup; `subject` and `body` are plain text (SMS, chat, the email text
 * part) and rendered verbatim.
 */
import Mustache from 'mustache';
import { SluiceError } from '../core/errors.js';

/** One declared param. Every declared param is required; a param not declared is refused. */
export interface TemplateParam {
  type: 'string' | 'number';
  maxLength?: number;
  /** A regular expression the value must match (JSON Schema `pattern` semantics: unanchored; anchor with `^…$`). */
  pattern?: string;
}

/**
 * A vendor's approved template for one SMS provider (by provider id) or kind (`aliyun-sms`...):
 * failover to another vendor sends through that vendor's own template. Fields beyond these are
 * kept and ignored by sluice.
 */
export interface VendorTemplate {
  /** Aliyun `TemplateCode`, Tencent `TemplateId`. */
  templateCode: string;
  /** The approved sign (签名); absent: the provider's configured one. */
  signName?: string;
  /** The params in the order of the vendor's positional placeholders (Tencent `{1}`, `{2}`); absent: declaration order. */
  paramOrder?: string[];
  [extra: string]: unknown;
}

/** A template as stored (one version). */
export interface TemplateSpec {
  params: Record<string, TemplateParam>;
  body?: string;
  subject?: string;
  html?: string;
  vendor?: Record<string, VendorTemplate>;
}

/** The current version of a template as the chain sees it. */
export interface StoredTemplate extends TemplateSpec {
  name: string;
  version: number;
}

/** What rendering produces: the content of the message and what it pins. */
export interface RenderedTemplate {
  name: string;
  version: number;
  params: Record<string, string>;
  subject?: string;
  body?: string;
  html?: string;
  vendor?: Record<string, VendorTemplate>;
}

/** Template names: letters, digits, `_`, `.`, `-` (no `:`: names are part of cache keys). */
export const TEMPLATE_NAME = '^[A-Za-z0-9_.-]{1,128}$';

const TEXT_FIELDS = ['subject', 'body', 'html'] as const;
const verbatim = (value: unknown) => String(value);

/** The names a Mustache text refers to (variables and sections), top level only. */
function referencedNames(text: string): string[] {
  const names: string[] = [];
  const walk = (spans: Mustache.TemplateSpans) => {
    for (const span of spans) {
      const [type, value] = span as unknown as [string, string, number, number, Mustache.TemplateSpans?];
      if (type === 'name' || type === '&' || type === '#' || type === '^') names.push(value.split('.')[0]!);
      if (type === '>') throw new Error('partials ({{> name}}) are not supported');
      const children = (span as unknown[])[4];
      if (Array.isArray(children)) walk(children as Mustache.TemplateSpans);
    }
  };
  walk(Mustache.parse(text));
  return names;
}

/**
 * Checks a template before it is stored: every text parses, names only declared params, every
 * pattern compiles, and the channel's content is there. Throws INVALID_REQUEST naming the field.
 */
export function checkTemplate(channel: string, spec: TemplateSpec): void {
  const invalid = (message: string, field: string) => new SluiceError('INVALID_REQUEST', message, { details: { field } });
  for (const [name, param] of Object.entries(spec.params)) {
    if (param.pattern !== undefined) {
      try {
        new RegExp(param.pattern, 'u');
      } catch {
        throw invalid(`param "${name}": pattern is not a valid regular expression`, `params.${name}.pattern`);
      }
    }
  }
  for (const field of TEXT_FIELDS) {
    const text = spec[field];
    if (text === undefined) continue;
    let names: string[];
    try {
      names = referencedNames(text);
    } catch (error) {
      throw invalid(`\`${field}\` is not a valid template: ${(error as Error).message}`, field);
    }
    const unknown = names.find((name) => !Object.hasOwn(spec.params, name));
    if (unknown !== undefined) throw invalid(`\`${field}\` uses {{${unknown}}}, which is not a declared param`, field);
  }
  for (const [key, vendor] of Object.entries(spec.vendor ?? {})) {
    const unknown = vendor.paramOrder?.find((name) => !Object.hasOwn(spec.params, name));
    if (unknown !== undefined)
      throw invalid(`vendor "${key}": paramOrder names "${unknown}", which is not a declared param`, `vendor.${key}`);
  }
  const has = (text: string | undefined) => typeof text === 'string' && text.length > 0;
  if ((channel === 'sms' || channel === 'webhook') && !has(spec.body)) throw invalid(`a ${channel} template needs \`body\``, 'body');
  if (channel === 'email' && (!has(spec.subject) || (!has(spec.body) && !has(spec.html))))
    throw invalid('an email template needs `subject` and `body` or `html`', has(spec.subject) ? 'body' : 'subject');
}

/** The params of a send checked against the template: 400 naming the first missing, unknown or invalid one. */
export function checkParams(template: TemplateSpec, params: Record<string, unknown> | undefined): Record<string, string> {
  const given = params ?? {};
  const invalid = (name: string, message: string) =>
    new SluiceError('INVALID_REQUEST', `param "${name}" ${message}`, { details: { field: `params.${name}` } });
  for (const name of Object.keys(given)) if (!Object.hasOwn(template.params, name)) throw invalid(name, 'is not a param of this template');
  const checked: Record<string, string> = {};
  for (const [name, param] of Object.entries(template.params)) {
    const value = given[name];
    if (value === undefined || value === null) throw invalid(name, 'is missing');
    const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
    if (text === undefined) throw invalid(name, `must be a ${param.type}`);
    if (param.type === 'number' && !/^-?\d+(\.\d+)?$/.test(text.trim())) throw invalid(name, 'must be a number');
    if (param.maxLength !== undefined && [...text].length > param.maxLength)
      throw invalid(name, `is longer than ${param.maxLength} characters`);
    if (param.pattern !== undefined && !new RegExp(param.pattern, 'u').test(text)) throw invalid(name, `does not match ${param.pattern}`);
    checked[name] = text;
  }
  return checked;
}

/** Renders the template's texts with checked params; `html` HTML-escaped, the others verbatim. */
export function renderTemplate(template: StoredTemplate, params: Record<string, unknown> | undefined): RenderedTemplate {
  const checked = checkParams(template, params);
  const rendered: RenderedTemplate = { name: template.name, version: template.version, params: checked };
  // No partials: `{}` resolves none (and they are refused when stored).
  if (template.subject !== undefined) rendered.subject = Mustache.render(template.subject, checked, {}, { escape: verbatim });
  if (template.body !== undefined) rendered.body = Mustache.render(template.body, checked, {}, { escape: verbatim });
  if (template.html !== undefined) rendered.html = Mustache.render(template.html, checked, {});
  if (template.vendor !== undefined) rendered.vendor = template.vendor;
  return rendered;
}
