/**
 * A template param's `pattern`, matched by RE2 (re2js, its pure-JavaScript port): time linear in
 * the value, never backtracking, so `^(a+)+$` against `aaaa…!` costs what `^a+$` does. The
 * pattern is written as ECMAScript (JSON Schema's `pattern`), translated to RE2 syntax; what RE2
 * cannot do in linear time (lookaround, backreferences) does not compile.
 *
 * Linear is not yet cheap: a match costs up to (compiled size × value length) steps. The bound is
 * per template: its patterns together cost at most PATTERN_STEPS_LIMIT steps a send, each param
 * counted at its `maxLength` (PARAM_VALUE_LIMIT when it declares none). bench/template-patterns.ts
 * measures the worst shapes at the bound.
 */
import { RE2JS } from 're2js';

/** Longest param value, in characters: the send schema's limit, and what checkParams enforces for every entry point. */
export const PARAM_VALUE_LIMIT = 1024;

/** Most matching steps (compiled size × maxLength, summed over params) a template's patterns may cost one send. */
export const PATTERN_STEPS_LIMIT = 65_536;

/** A compiled pattern and its worst cost. */
export interface ParamPattern {
  /** Instructions of the compiled program: a match visits at most this many per character. */
  readonly size: number;
  /** Whether the pattern matches somewhere in `text` (unanchored, as JSON Schema's `pattern`). */
  test(text: string): boolean;
}

/** Why a pattern cannot be used, in words for the admin. */
export class PatternError extends Error {}

/**
 * Compiles `source`, or throws a PatternError saying why (not valid ECMAScript, not expressible
 * in RE2). Compiling costs time linear in the compiled size, which RE2 itself caps.
 */
export function compilePattern(source: string): ParamPattern {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
    throw new PatternError(`is not a pattern RE2 can match in linear time (${reason}); lookaround and backreferences are not supported`);
  }
  return {
    size: compiled.programSize(),
    // find() asks for the match's bounds, which runs the one-pass or the bit-state engine: at most
    // size × length steps over a visited set of that many bits. test() would take the lazy DFA,
    // whose state cache a pattern with wide classes thrashes (docs/benchmarks.md, "Template
    // patterns").
    test: (text) => compiled.matcher(text).find(),
  };
}

/** The steps a param's pattern may cost one send: its size times the longest value the param takes. */
export const patternSteps = (pattern: ParamPattern, maxLength: number | undefined): number =>
  pattern.size * Math.min(maxLength ?? PARAM_VALUE_LIMIT, PARAM_VALUE_LIMIT);
