/** Sign-in with the admin token (SLUICE_ADMIN_TOKEN): checked by one admin call before it is kept. */
import { useState } from 'preact/hooks';
import { clientFor } from '../session.js';
import { ErrorAlert } from '../ui/alert.js';
import { useAction } from '../ui/calls.js';
import { CheckField, Form, TextField } from '../ui/fields.js';

/** `refused`: the session ended because the API refused its token (rotated, or wrong when kept). */
export function SignIn({ onSignedIn, refused }: { onSignedIn: (token: string, keep: boolean) => void; refused?: boolean }) {
  const [token, setToken] = useState('');
  const [keep, setKeep] = useState(false);
  const action = useAction();
  return (
    <main class="sign-in" id="main">
      <h1>sluice console</h1>
      <p>Sign in with the admin token (SLUICE_ADMIN_TOKEN). It is kept in this tab's memory, and never put in a URL.</p>
      {refused ? (
        <p role="alert">The admin token was refused (it may have been changed): you were signed out. Sign in with the current one.</p>
      ) : null}
      <Form
        label="Sign in"
        submit="Sign in"
        busy={action.busy}
        onSubmit={async () => {
          const checked = await action.run(() => clientFor(token).admin.listTenants({ limit: 1 }));
          if (checked) onSignedIn(token, keep);
        }}
      >
        <TextField label="Admin token" type="password" value={token} onInput={setToken} required autoComplete="current-password" />
        <CheckField label="Keep me signed in in this tab (session storage, until the tab closes)" checked={keep} onChange={setKeep} />
      </Form>
      <ErrorAlert error={action.error} />
    </main>
  );
}
