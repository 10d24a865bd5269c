/**
 * A parser of the Prometheus text exposition format (version 0.0.4, what prom-client and so
 * `GET /metrics` serve) into metric families and their samples. Pure: no DOM, no clock.
 *
 * Histogram and summary samples (`x_bucket`, `x_sum`, `x_count`) belong to the family `x` that their
 * `# TYPE` line declared; a sample with no `# TYPE` before it makes an `untyped` family of its own
 * name. A malformed line throws {@link ExpositionError} with its line number: a half-read scrape
 * would chart wrong numbers, so the caller shows the error instead.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** One line of values: its full name (`x_bucket` for a histogram bucket), labels and value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** A float; `+Inf`, `-Inf` and `NaN` as the JavaScript values. */
  readonly value: number;
  /** Milliseconds since the epoch, when the line carried a timestamp (prom-client never does). */
  readonly timestampMs?: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly samples: Sample[];
}

/** Families by name, in the order of the text. */
export type Exposition = ReadonlyMap<string, MetricFamily>;

export class ExpositionError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`metrics line ${line}: ${reason}`);
    this.name = 'ExpositionError';
  }
}

const TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** Suffixes of the samples of a histogram or summary family, beside its own name (summary quantiles). */
const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count'],
};
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const FLOAT = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Parses a whole exposition. */
export function parseExposition(text: string): Exposition {
  const families = new Map<string, { name: string; type: MetricType; help: string; samples: Sample[] }>();
  const family = (name: string) => {
    let found = families.get(name);
    if (!found) {
      found = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, found);
    }
    return found;
  };
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    const number = index + 1;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const [, keyword, name, rest] = /^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line) ?? [];
      if (keyword === 'HELP') family(name!).help = unescapeHelp(rest ?? '');
      else if (keyword === 'TYPE') {
        if (!TYPES.has(rest ?? '')) throw new ExpositionError(number, `unknown type "${rest ?? ''}" for ${name}`);
        family(name!).type = rest as MetricType;
      }
      continue; // any other comment
    }
    const sample = parseSample(line, number);
    family(familyName(sample.name, families)).samples.push(sample);
  }
  return families;
}

/** The family a sample belongs to: `x` for `x_bucket` when `x` was declared a histogram. */
function familyName(sample: string, families: ReadonlyMap<string, { type: MetricType }>): string {
  for (const [type, suffixes] of Object.entries(SUFFIXES)) {
    for (const suffix of suffixes) {
      if (!sample.endsWith(suffix)) continue;
      const base = sample.slice(0, -suffix.length);
      if (families.get(base)?.type === type) return base;
    }
  }
  return sample;
}

function parseSample(line: string, number: number): Sample {
  const name = NAME.exec(line)?.[0];
  if (!name) throw new ExpositionError(number, 'expected a metric name');
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') at = parseLabels(line, at + 1, labels, number);
  const fields = line
    .slice(at)
    .trim()
    .split(/[ \t]+/);
  if (fields.length < 1 || fields.length > 2 || fields[0] === '') throw new ExpositionError(number, 'expected a value');
  const value = parseValue(fields[0]!, number);
  if (fields.length === 1) return { name, labels, value };
  const timestampMs = Number(fields[1]);
  if (!Number.isInteger(timestampMs)) throw new ExpositionError(number, `bad timestamp "${fields[1]}"`);
  return { name, labels, value, timestampMs };
}

/** Reads `a="x",b="y"}` from `at` (just past the `{`); returns the index past the `}`. */
function parseLabels(line: string, start: number, into: Record<string, string>, number: number): number {
  let at = start;
  for (;;) {
    while (line[at] === ' ' || line[at] === '\t') at++;
    if (line[at] === '}') return at + 1;
    const name = LABEL_NAME.exec(line.slice(at))?.[0];
    if (!name) throw new ExpositionError(number, `expected a label name at column ${at + 1}`);
    at += name.length;
    if (line[at] !== '=' || line[at + 1] !== '"') throw new ExpositionError(number, `expected ="..." after label ${name}`);
    at += 2;
    let value = '';
    for (;;) {
      const char = line[at];
      if (char === undefined) throw new ExpositionError(number, `unterminated value of label ${name}`);
      at++;
      if (char === '"') break;
      if (char !== '\\') {
        value += char;
        continue;
      }
      const escaped = line[at++];
      if (escaped === 'n') value += '\n';
      else if (escaped === '\\' || escaped === '"') value += escaped;
      else throw new ExpositionError(number, `bad escape \\${escaped ?? ''} in label ${name}`);
    }
    if (name in into) throw new ExpositionError(number, `label ${name} given twice`);
    into[name] = value;
    while (line[at] === ' ' || line[at] === '\t') at++;
    if (line[at] === ',') at++;
    else if (line[at] !== '}') throw new ExpositionError(number, `expected , or } after label ${name}`);
  }
}

function parseValue(field: string, number: number): number {
  // As Go's ParseFloat, which Prometheus uses: infinities and NaN in any case. prom-client writes
  // `Nan` for an event-loop gauge not yet measured.
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(field);
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') return Number.NaN;
    return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  // Number() alone would also take '0x10' and '', which are not Prometheus floats.
  if (!FLOAT.test(field)) throw new ExpositionError(number, `bad value "${field}"`);
  return Number(field);
}

/** HELP text escapes only `\\` and `\n` (label values also `\"`, read in parseLabels). */
function unescapeHelp(text: string): string {
  return text.replace(/\\([\\n])/g, (_whole, char: string) => (char === 'n' ? '\n' : char));
}

/** A stable key for a label set (names sorted), e.g. `code="RATE_LIMITED",interceptor="frequency"`. */
export function labelKey(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((name) => `${name}=${JSON.stringify(labels[name])}`)
    .join(',');
}
