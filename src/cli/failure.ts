/** How a failed command is told to the operator: one line on stderr, the whole error only when debugging. */
import { inspect } from 'node:util';
import { CommanderError } from 'commander';
import { SluiceError } from '../core/errors.js';
import { SettingsError } from '../settings/settings.js';

/**
 * An error and its causes in one line. An empty message falls back to the inner errors or the
 * code: Node reports a refused connection to a name with two addresses (`localhost`) as an
 * AggregateError without a message.
 */
function explain(error: unknown): string {
  const parts: string[] = [];
  let current = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    if (!(current instanceof Error)) {
      parts.push(String(current));
      break;
    }
    const text =
      current.message ||
      (current instanceof AggregateError ? current.errors.map((inner) => explain(inner)).join('; ') : '') ||
      ((current as NodeJS.ErrnoException).code ?? current.name);
    // A wrapper often repeats its cause's message (MigrationError does): keep each once.
    if (!parts.some((part) => part.includes(text))) parts.push(text);
    current = current.cause;
  }
  return parts.join(': ');
}

/**
 * Prints `error` for the operator in one line (exit code 1 is the caller's). The whole error
 * (stack, causes) only at SLUICE_LOG_LEVEL=debug or trace: a wrong argument or an unreachable
 * database is not a crash.
 */
export function reportFailure(error: unknown): void {
  if (error instanceof SluiceError) console.error(`${error.code}: ${error.message}`);
  else if (error instanceof SettingsError) console.error(`configuration: ${error.message}`);
  else if (error instanceof CommanderError) console.error(`error: ${error.message.replace(/^error: /, '')}`);
  else console.error(`error: ${explain(error)}`);
  if (/^(debug|trace)$/.test(process.env.SLUICE_LOG_LEVEL ?? '')) console.error(inspect(error, { depth: 8 }));
}
