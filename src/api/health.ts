/** Liveness and readiness (no credentials). */
import { Type } from '@sinclair/typebox';
import { ErrorBody } from './errors.js';

export const Liveness = Type.Object({ status: Type.Literal('ok') });

export const Readiness = Type.Object({
  status: Type.String({ enum: ['ready', 'not-ready'] }),
  checks: Type.Record(
    Type.String(),
    Type.Object({
      ok: Type.Boolean(),
      detail: Type.Optional(Type.String()),
      warning: Type.Optional(
        Type.String({ description: 'Something to fix that does not make the instance not ready, even beside ok: false' }),
      ),
    }),
  ),
});

/** `/readyz`'s 503: a readiness with a failed check, or the error body of an instance shutting down. */
export const NotReady = Type.Union([Readiness, ErrorBody], {
  description: 'Not ready (a check failed: its detail says why), or the instance is shutting down (an error body)',
});
