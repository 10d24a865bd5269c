/**
 * What a template param's pattern costs one send (src/admission/template-patterns.ts): hostile
 * shapes of patterns at the bound (compiled size × value length close to PATTERN_STEPS_LIMIT),
 * matched the way sluice matches (`find()`: the one-pass or bit-state engine), beside re2js's
 * `test()` (the lazy DFA) and, for the backtracking classic, what the JavaScript engine spent
 * on a value 22 characters long. Values are random `a`/`b` strings so that a DFA meets a new
 * state at almost every character. `npx tsx bench/run.ts template-patterns`.
 */
import { performance } from 'node:perf_hooks';
import { RE2JS } from 're2js';
import { compilePattern, PATTERN_STEPS_LIMIT, patternSteps } from '../src/admission/template-patterns.js';
import type { Benchmark } from './support/benchmark.js';

/** Pattern, the value length it is counted at, and the values' alphabet. */
const SHAPES: [string, number, string][] = [
  ['^(a+)+$', 1024, 'a'],
  ['^\\d{4,8}$', 1024, '0123456789'],
  ['[ab]*a[ab]{20}$', 1024, 'ab'],
  ['[\\p{L}]*a[\\p{L}]{20}$', 1024, 'ab'],
  ['(?:[ab]?){20}[ab]{20}$', 1024, 'ab'],
  ['(?:[ab]?){80}[ab]{80}$', 256, 'ab'],
  ['(?:.?){30}.{30}$', 704, 'ab'],
];

function values(length: number, alphabet: string): string[] {
  let seed = 7;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  return Array.from({ length: 64 }, () => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
}

/** Mean milliseconds of `match` over the values, for about `seconds` (at least 5 runs). */
function msPerMatch(match: (value: string) => boolean, inputs: string[], seconds: number): number {
  for (let i = 0; i < 5; i++) match(inputs[i % inputs.length]!);
  const started = performance.now();
  let runs = 0;
  while (runs < 5 || (performance.now() - started < seconds * 1000 && runs < 20_000)) match(inputs[runs++ % inputs.length]!);
  return (performance.now() - started) / runs;
}

export const benchmark: Benchmark = {
  name: 'template-patterns',
  title: 'Template patterns',
  async run(context) {
    const seconds = Math.max(0.5, context.seconds / 5);
    const rows = [
      '| pattern | size | value length | steps (bound 65,536) | sluice: `find()` ms/match | re2js `test()` ms/match |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const [source, length, alphabet] of SHAPES) {
      context.progress(source);
      const inputs = values(length, alphabet);
      if (source === '^(a+)+$') for (let i = 0; i < inputs.length; i++) inputs[i] = `${inputs[i]!.slice(1)}!`;
      const pattern = compilePattern(source);
      const dfa = RE2JS.compile(RE2JS.translateRegExp(source));
      const steps = patternSteps(pattern, length);
      const ours = msPerMatch(pattern.test, inputs, seconds);
      const theirs = msPerMatch((value) => dfa.test(value), inputs, seconds);
      rows.push(
        `| \`${source}\` | ${pattern.size} | ${length} | ${steps}${steps > PATTERN_STEPS_LIMIT ? ' (refused)' : ''} | ${ours.toFixed(3)} | ${theirs.toFixed(3)} |`,
      );
    }
    const backtracking = /^(a+)+$/u;
    const started = performance.now();
    backtracking.test(`${'a'.repeat(22)}!`);
    const jsMs = performance.now() - started;
    return `${rows.join('\n')}\n\nThe JavaScript engine (backtracking) on \`^(a+)+$\` and 22 \`a\`s and a \`!\`: ${jsMs.toFixed(0)} ms (it doubles with each \`a\`).\n`;
  },
};
