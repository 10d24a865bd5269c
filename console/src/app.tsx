/** The console's shell: sign-in, then the navigation (a list of links) and the screen the hash names. */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { href, type Route, useRoute } from './router.js';
import { SCREENS } from './screens/index.js';
import { SignIn } from './screens/sign-in.js';
import { clientFor, keepToken, keptToken } from './session.js';
import { ClientContext } from './ui/context.js';

export function App() {
  const [token, setToken] = useState<string | undefined>(() => keptToken());
  const [refused, setRefused] = useState(false);
  const client = useMemo(
    () =>
      token
        ? clientFor(token, () => {
            // A refused token is forgotten, kept copy included: sign in again with the current one.
            keepToken(undefined);
            setToken(undefined);
            setRefused(true);
          })
        : undefined,
    [token],
  );
  const route = useRoute();
  if (!client) {
    return (
      <SignIn
        refused={refused}
        onSignedIn={(signedIn, keep) => {
          if (keep) keepToken(signedIn);
          setRefused(false);
          setToken(signedIn);
        }}
      />
    );
  }
  return (
    <ClientContext.Provider value={client}>
      <Shell
        route={route}
        onSignOut={() => {
          keepToken(undefined);
          setToken(undefined);
        }}
      />
    </ClientContext.Provider>
  );
}

function Shell({ route, onSignOut }: { route: Route; onSignOut: () => void }) {
  const screen = SCREENS.find((candidate) => candidate.id === route.screen);
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${screen?.title ?? 'Not found'} · sluice console`;
  }, [screen]);
  // A new screen takes the focus (its main region), so a keyboard or screen reader user starts
  // there rather than on the link that was followed (or, after sign-in, on nothing).
  useEffect(() => {
    main.current?.focus();
  }, [route.screen]);
  const Screen = screen?.component;
  return (
    <div class="shell">
      {/* A button, not a link to #main: the hash is the router's. */}
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">sluice console</span>
        <button type="button" class="secondary" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Console" class="side">
        <ul>
          {SCREENS.filter((entry) => !entry.hidden).map((entry) => (
            <li key={entry.id}>
              <a href={href(entry.id)} aria-current={entry.id === route.screen ? 'page' : undefined}>
                {entry.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main} tabIndex={-1}>
        {Screen ? (
          <Screen args={route.args} />
        ) : (
          <>
            <h1>Not found</h1>
            <p>No screen is called “{route.screen}”.</p>
          </>
        )}
      </main>
    </div>
  );
}
