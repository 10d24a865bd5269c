/**
 * Message templates: what an admin stores per tenant and channel, how a send's params are checked
 * against it, and how its text is rendered. Rendering is Mustache (logic-less: variables and
 * sections, no code), with no partials, and every tag names a declared param exactly. `html` is
 * rendered with Mustache's HTML escaping for every tag, so a param can never inject markup: a new
 * version may not hold an unescaped tag (`{{{x}}}`, `{{& x}}`) or a delimiter change, and one stored
 * before that rule renders those tags escaped. `subject` and `body` are plain text (SMS, chat, the
 * email text part) and rendered verbatim. A rendered text is held to its inline limit
 * (CONTENT_LIMITS); the render stops as soon as its params alone pass it.
 */
import Mustache from 'mustache';
import { SluiceError } from '../core/errors.js';
import {
  compilePattern,
  PARAM_VALUE_LIMIT,
  PATTERN_STEPS_LIMIT,
  type ParamPattern,
  PatternError,
  patternSteps,
} from './template-patterns.js';

/** One declared param. Every declared param is required; a param not declared is refused. */
export interface TemplateParam {
  type: 'string' | 'number';
  /** At most PARAM_VALUE_LIMIT (1,024) characters, which also applies when absent. */
  maxLength?: number;
  /**
   * A regular expression the value must match, unanchored as JSON Schema's `pattern` (anchor with
   * `^…$`); matched by RE2 in linear time (template-patterns.ts).
   */
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

/**
 * The most characters (code points) each text of a message may hold: the send schema's limits of an
 * inline text, which a rendered one meets as well.
 */
export const CONTENT_LIMITS = { subject: 998, body: 32_768, html: 65_536 } as const;

const TEXT_FIELDS = ['subject', 'body', 'html'] as const;
type TextField = (typeof TEXT_FIELDS)[number];

/** A node of Mustache's parse tree: `[type, value, start, end, children?, …]`. */
type Span = [string, string, number, number, ...unknown[]];

/** Mustache's parser and renderer without a template cache: the default one keeps every text it ever parsed. */
const writer = new Mustache.Writer();
(writer as unknown as { templateCache: undefined }).templateCache = undefined;

/**
 * Longest run of whitespace a stored text may hold. Mustache's tag scanner searches `\s*}}`, which
 * is quadratic in a run of whitespace inside a tag: 64 Ki characters of it held the event loop
 * for 6 s; runs of 1,024 keep a 64 Ki text's parse under 0.1 s.
 */
const LONGEST_WHITESPACE_RUN = 1024;

/** What is wrong with a template, and in which field. */
class TemplateProblem extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

/** A template checked and ready to render: its texts' parse trees and its params' compiled patterns. */
interface CompiledTemplate {
  texts: Partial<Record<TextField, Span[]>>;
  patterns: Map<string, ParamPattern>;
}

const codePoints = (text: string): number => {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
};

/**
 * Parses one text and checks every tag: no partial, a name that is exactly a declared param (a
 * dotted path would reach the prototype of a string: `{{#p.__proto__.repeat}}`), and in `html`
 * (when `storing`) no unescaped tag or delimiter change. Returns the tree with every unescaped
 * tag turned into an escaped one, so every value goes through the render's escape function:
 * HTML-escaped in `html`, and counted against the limit everywhere.
 */
function compileText(field: TextField, text: string, params: TemplateSpec['params'], storing: boolean): Span[] {
  if (codePoints(text) > CONTENT_LIMITS[field])
    throw new TemplateProblem(`\`${field}\` is longer than ${CONTENT_LIMITS[field]} characters`, field);
  // \s+ with nothing after it never backtracks: one pass over the text.
  if (storing)
    for (const run of text.matchAll(/\s+/g))
      if (run[0].length > LONGEST_WHITESPACE_RUN)
        throw new TemplateProblem(`\`${field}\` holds a run of more than ${LONGEST_WHITESPACE_RUN} whitespace characters`, field);
  let tree: Span[];
  try {
    tree = writer.parse(text) as Span[];
  } catch (error) {
    throw new TemplateProblem(`\`${field}\` is not a valid template: ${(error as Error).message}`, field);
  }
  const walk = (spans: Span[]): Span[] =>
    spans.map((span) => {
      const [type, value] = span;
      if (type === '>') throw new TemplateProblem(`\`${field}\` is not a valid template: partials ({{> name}}) are not supported`, field);
      if (field === 'html' && storing && type === '&')
        throw new TemplateProblem(`\`html\` renders {{{${value}}}} unescaped: use {{${value}}}, which escapes it`, field);
      if (field === 'html' && storing && type === '=')
        throw new TemplateProblem('`html` changes the tag delimiters ({{=… …=}}): keep {{ }}, so every tag is checked', field);
      if (type === 'name' || type === '&' || type === '#' || type === '^') {
        if (value.includes('.') || !Object.hasOwn(params, value))
          throw new TemplateProblem(`\`${field}\` uses {{${value}}}, which is not a declared param (a tag names one exactly)`, field);
      }
      const copy: Span = [...span];
      if (type === '&') copy[0] = 'name';
      if (Array.isArray(span[4])) copy[4] = walk(span[4] as Span[]);
      return copy;
    });
  return walk(tree);
}

/** Every check of a template; `storing` adds those a new version must pass and an older one is rendered around. */
function compileTemplate(spec: TemplateSpec, storing: boolean): CompiledTemplate {
  const patterns = new Map<string, ParamPattern>();
  let steps = 0;
  let costliest: { name: string; steps: number } | undefined;
  for (const [name, param] of Object.entries(spec.params)) {
    if (param.pattern === undefined) continue;
    let pattern: ParamPattern;
    try {
      pattern = compilePattern(param.pattern);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      throw new TemplateProblem(`param "${name}": pattern ${error.message}`, `params.${name}.pattern`);
    }
    patterns.set(name, pattern);
    const cost = patternSteps(pattern, param.maxLength);
    steps += cost;
    if (!costliest || cost > costliest.steps) costliest = { name, steps: cost };
  }
  if (costliest && steps > PATTERN_STEPS_LIMIT)
    throw new TemplateProblem(
      `the params' patterns may cost ${steps} steps a send, over ${PATTERN_STEPS_LIMIT} (each pattern's compiled size times its param's maxLength, ${PARAM_VALUE_LIMIT} without one); param "${costliest.name}" costs ${costliest.steps}: give it a maxLength or a simpler pattern`,
      `params.${costliest.name}.pattern`,
    );
  const texts: CompiledTemplate['texts'] = {};
  for (const field of TEXT_FIELDS) {
    const text = spec[field];
    if (text !== undefined) texts[field] = compileText(field, text, spec.params, storing);
  }
  return { texts, patterns };
}

/**
 * Checks a template before it is stored: every text parses, each tag names a declared param,
 * `html` has no unescaped tag, every pattern compiles within the cost bound, and the channel's
 * content is there. Throws INVALID_REQUEST naming the field.
 */
export function checkTemplate(channel: string, spec: TemplateSpec): void {
  const invalid = (message: string, field: string) => new SluiceError('INVALID_REQUEST', message, { details: { field } });
  try {
    compileTemplate(spec, true);
  } catch (error) {
    if (error instanceof TemplateProblem) throw invalid(error.message, error.field);
    throw error;
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
function checkParams(template: TemplateSpec, patterns: Map<string, ParamPattern>, params: Record<string, unknown> | undefined) {
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
    const maxLength = Math.min(param.maxLength ?? PARAM_VALUE_LIMIT, PARAM_VALUE_LIMIT);
    if (text.length > 2 * maxLength || codePoints(text) > maxLength) throw invalid(name, `is longer than ${maxLength} characters`);
    if (param.type === 'number' && !/^-?\d+(\.\d+)?$/.test(text.trim())) throw invalid(name, 'must be a number');
    const pattern = patterns.get(name);
    if (pattern !== undefined && !pattern.test(text)) throw invalid(name, `does not match ${param.pattern}`);
    checked[name] = text;
  }
  return checked;
}

/** Compiled once per cached template object (the live cache hands out the same one until it reloads). */
const compiled = new WeakMap<StoredTemplate, CompiledTemplate | TemplateProblem>();

function compiledOf(template: StoredTemplate): CompiledTemplate {
  let found = compiled.get(template);
  if (found === undefined) {
    try {
      found = compileTemplate(template, false);
    } catch (error) {
      if (!(error instanceof TemplateProblem)) throw error;
      found = error;
    }
    compiled.set(template, found);
  }
  // A version stored before a check it fails: its sends are refused until a new version is stored.
  if (found instanceof TemplateProblem)
    throw new SluiceError(
      'INVALID_REQUEST',
      `template "${template.name}" version ${template.version} cannot be sent: ${found.message}; store a new version`,
      { details: { field: 'template' } },
    );
  return found;
}

const tooLong = (field: TextField) =>
  new SluiceError(
    'INVALID_REQUEST',
    `the rendered \`${field}\` is longer than ${CONTENT_LIMITS[field]} characters, the limit of \`${field}\``,
    {
      details: { field, limit: CONTENT_LIMITS[field] },
    },
  );

/**
 * One text rendered within its limit. Every value goes through `escape`, which counts what the
 * params add and stops the render once that alone is past the limit, so a text of many tags
 * never grows far beyond it; the whole is measured at the end.
 */
function renderText(field: TextField, tree: Span[], text: string, view: Record<string, string>): string {
  const limit = CONTENT_LIMITS[field];
  const encode: (value: string) => string = field === 'html' ? Mustache.escape : (value) => value;
  let added = 0;
  const escapeCounted = (value: unknown) => {
    const encoded = encode(String(value));
    added += codePoints(encoded);
    if (added > limit) throw tooLong(field);
    return encoded;
  };
  const rendered = writer.renderTokens(tree as unknown as string[][], new Mustache.Context(view), undefined, text, {
    escape: escapeCounted,
  });
  if (codePoints(rendered) > limit) throw tooLong(field);
  return rendered;
}

/**
 * Renders the template's texts with checked params; `html` HTML-escaped, the others verbatim.
 * Throws INVALID_REQUEST naming a param that fails its check, a text whose render passes its
 * limit, or `template` when the stored version fails today's checks.
 */
export function renderTemplate(template: StoredTemplate, params: Record<string, unknown> | undefined): RenderedTemplate {
  const { texts, patterns } = compiledOf(template);
  const checked = checkParams(template, patterns, params);
  // No prototype: a tag finds the declared params and nothing else.
  const view: Record<string, string> = Object.assign(Object.create(null), checked);
  const rendered: RenderedTemplate = { name: template.name, version: template.version, params: checked };
  for (const field of TEXT_FIELDS) {
    const tree = texts[field];
    if (tree !== undefined) rendered[field] = renderText(field, tree, template[field]!, view);
  }
  if (template.vendor !== undefined) rendered.vendor = template.vendor;
  return rendered;
}
