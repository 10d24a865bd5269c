/**
 * Database URLs: which dialect a URL names, its SQLite path, and its text safe to log. No driver is
 * loaded here, so the settings check (`config check`) can use it.
 */

export type Dialect = 'sqlite' | 'postgres' | 'mysql';

/** Thrown for a URL whose scheme names no supported database. */
export class UnsupportedDatabaseUrlError extends Error {
  constructor(url: string) {
    super(`Unsupported database URL "${maskUrl(url)}": use sqlite:path/to/file.db, sqlite::memory:, postgres://... or mysql://...`);
    this.name = 'UnsupportedDatabaseUrlError';
  }
}

/** Query parameters that may hold a credential (`?password=`, `?sslkey=`, `?token=`...). */
const SECRET_PARAMETER = /pass|pwd|secret|token|key|auth/i;

/**
 * The URL without its password, wherever it is given (`scheme://user:***@host/...?password=***`),
 * parsed as the drivers parse it (the password runs to the last `@`). Text that does not parse as
 * a URL is hidden whole: it may be nothing but a password.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '***';
  }
  let masked = false;
  if (parsed.password) {
    parsed.password = '***';
    masked = true;
  }
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMETER.test(name)) {
      parsed.searchParams.set(name, '***');
      masked = true;
    }
  }
  // Untouched text stays as written (a sqlite: path is not re-encoded).
  return masked ? parsed.toString().replaceAll('%2A%2A%2A', '***') : url;
}

/** The dialect a URL selects, or `undefined` for an unknown scheme. */
export function dialectOfUrl(url: string): Dialect | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'sqlite') return 'sqlite';
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres';
  if (scheme === 'mysql' || scheme === 'mariadb') return 'mysql';
  return undefined;
}

/** The file path of a `sqlite:` URL (`:memory:` for an in-memory database). */
export function sqlitePathOfUrl(url: string): string {
  let rest = url.slice('sqlite:'.length);
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') throw new UnsupportedDatabaseUrlError(url);
  return rest;
}
