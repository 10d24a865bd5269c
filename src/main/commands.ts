/**
 * What a CLI command runs on: the services of a runtime made for that one command (logs on stderr
 * at `warn`, no HTTP, no roles), built as the command reads them, then closed. The database must
 * exist with sluice's tables: a command run from another folder, or with a wrong SLUICE_DB_URL,
 * is refused naming the database, instead of creating an empty one and answering from it.
 */
import pino from 'pino';
import { loggerOptions } from '../infra/logging.js';
import type { Services } from '../services/contracts.js';
import type { Settings } from '../settings/settings.js';
import type { Backend } from './backend/backend.js';
import { createRuntime } from './runtime.js';

/** `work` receives the services and the kind of backend the runtime chose (`backend/backend.ts` decides it). */
export async function withServices<T>(settings: Settings, work: (services: Services, backend: Backend['kind']) => Promise<T>): Promise<T> {
  // Logs on stderr: stdout carries the command's answer (JSON a script may parse). Through
  // process.stderr (synchronous on files, pipes and terminals), so a test running commands in
  // process sees them too.
  const runtime = await createRuntime(settings, { logger: pino(loggerOptions('warn'), process.stderr), requireSchema: true });
  try {
    return await work(runtime.services, runtime.backend.kind);
  } finally {
    await runtime.close();
  }
}
