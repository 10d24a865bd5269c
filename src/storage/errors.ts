/**
 * Storage errors. Constraint violations that callers must tell apart become typed errors
 * (`SluiceError` with code `CONFLICT`, so an unhandled one still answers 409); everything else
 * is the driver's error, unchanged: a failure, not data.
 */
import { SluiceError } from '../core/errors.js';

/**
 * A message insert hit UNIQUE(tenant_id, idempotency_key): a message with this key exists.
 * The admission step loads it (`findByIdempotencyKey`) and answers it again, or 409 when the
 * stored `requestHash` differs from the new request's.
 */
export class DuplicateIdempotencyKeyError extends SluiceError {
  constructor(
    readonly tenantId: string,
    readonly idempotencyKey: string,
    cause?: unknown,
  ) {
    super('CONFLICT', 'A message with this Idempotency-Key already exists', { details: { idempotencyKey }, cause });
    this.name = 'DuplicateIdempotencyKeyError';
  }
}

/** A unique name (tenant name) is taken. */
export class DuplicateNameError extends SluiceError {
  constructor(
    readonly entity: string,
    readonly duplicateName: string,
    cause?: unknown,
  ) {
    super('CONFLICT', `A ${entity} named "${duplicateName}" already exists`, { details: { name: duplicateName }, cause });
    this.name = 'DuplicateNameError';
  }
}

interface DriverError {
  code?: unknown;
  errno?: unknown;
}

function driverError(error: unknown): DriverError {
  return typeof error === 'object' && error !== null ? (error as DriverError) : {};
}

/** True for a UNIQUE / PRIMARY KEY violation on any dialect (SQLite, PostgreSQL 23505, MySQL 1062). */
export function isUniqueViolation(error: unknown): boolean {
  const { code, errno } = driverError(error);
  return (
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === '23505' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062
  );
}

/**
 * True for errors where re-running the same transaction can succeed: deadlock or serialization
 * failure (PostgreSQL 40P01/40001, MySQL 1213/1205), SQLite busy.
 */
export function isTransientConflict(error: unknown): boolean {
  const { code, errno } = driverError(error);
  return (
    code === '40P01' ||
    code === '40001' ||
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT' ||
    errno === 1213 ||
    errno === 1205 ||
    code === 'SQLITE_BUSY'
  );
}

/** Runs `work`, re-running it (up to `attempts` times in all) while it fails with a transient conflict. */
export async function retryTransient<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !isTransientConflict(error)) throw error;
    }
  }
}
