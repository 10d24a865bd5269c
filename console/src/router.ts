/** A hash router: `#/rules/<tenant>` → `{screen: 'rules', args: ['<tenant>']}`. The hash never holds a secret. */
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  screen: string;
  args: string[];
}

/** A segment as written when it is not valid percent-encoding (a hand-typed or crafted link). */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The screen and its arguments. `.` and `..` arguments are dropped: as ids in an API path they
 * would climb to another route (`tenants/../blacklist` is the global list).
 */
export function parseHash(hash: string): Route {
  const [screen = '', ...args] = hash.replace(/^#\/?/, '').split('/').map(decodeSegment);
  return { screen: screen || 'tenants', args: args.filter((arg) => arg !== '.' && arg !== '..') };
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
