import type { ComponentChildren } from 'preact';

/** A key or secret the API shows this once: copy it now, it cannot be read again. */
export function OnceSecret({ label, secret, children }: { label: string; secret: string; children?: ComponentChildren }) {
  return (
    <div class="once" role="status">
      <p>{label} (shown this once — copy it now, it cannot be read again):</p>
      <output class="secret">{secret}</output>
      {children ? <p>{children}</p> : null}
    </div>
  );
}
