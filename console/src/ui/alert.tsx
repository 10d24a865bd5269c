import type { ClientError } from '../../../src/client/index.js';

/** An API error as the API said it: its stable code (docs/errors.md) and message. */
export function ErrorAlert({ error }: { error: ClientError | undefined }) {
  if (!error) return null;
  return (
    <div role="alert" class="alert">
      <strong class="code">{error.code}</strong> {error.message}
      {error.retryAfterSeconds ? <span> (retry after {error.retryAfterSeconds} s)</span> : null}
    </div>
  );
}

/** A success note, read out by screen readers. */
export function Notice({ text }: { text: string | undefined }) {
  if (!text) return null;
  return (
    <p role="status" class="notice">
      {text}
    </p>
  );
}
