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

/** `scheme://user:***@host/...?password=***`: the URL without its password, wherever it is given. */
export function maskUrl(url: string): string {
  const withoutUserPassword = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
  return withoutUserPassword.replace(/([?&])([^=&#]+)=([^&#]*)/g, (whole, separator: string, name: string) =>
    SECRET_PARAMETER.test(name) ? `${separator}${name}=***` : whole,
  );
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
