/** A hash router: `#/rules/<tenant>` → `{screen: 'rules', args: ['<tenant>']}`. The hash never holds a secret. */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  screen: string;
  args: string[];
}

export function parseHash(hash: string): Route {
  const [screen = '', ...args] = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { screen: screen || 'tenants', args };
}

export function href(screen: string, ...args: string[]): string {
  return `#/${[screen, ...args].map(encodeURIComponent).join('/')}`;
}

export function navigate(screen: string, ...args: string[]): void {
  window.location.hash = href(screen, ...args);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
