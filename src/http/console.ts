/**
 * The admin console's static files at `/console` (console/, built by Vite into `dist/console/`).
 *
 * Only the files listed in the build directory when the app starts are served, read into memory
 * then: a request names a key of that map or gets a 404, so no path can reach outside it
 * (`..`, encoded slashes, symlinks made later). Hashed files under `assets/` are cached for a year
 * (their name changes with their content); `index.html` is revalidated on every load, so a new
 * build is picked up at once. Every answer carries a Content-Security-Policy that allows scripts,
 * styles and fetches from this origin only, and no inline script or style.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { SluiceError } from '../core/errors.js';

/** Where `npm run build` puts the console, beside the compiled server (`dist/http/` → `dist/console/`). */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/** The console's policy: its own origin for everything, no inline code, no framing, no plugins. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface Asset {
  body: Buffer;
  contentType: string;
  cacheControl: string;
}

/** The console's files by their path under `/console/` (`index.html`, `assets/index-3f9a.js`…); undefined when not built. */
export function loadConsoleAssets(dir: string): Map<string, Asset> | undefined {
  let index: string;
  try {
    index = join(dir, 'index.html');
    if (!statSync(index).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const assets = new Map<string, Asset>();
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) {
        const contentType = CONTENT_TYPES[extname(entry.name)];
        // A file of a kind the console does not use (a source map, a stray file) is not served.
        if (!contentType) continue;
        const name = relative(dir, path).split(sep).join('/');
        const hashed = name.startsWith('assets/');
        assets.set(name, {
          body: readFileSync(path),
          contentType,
          cacheControl: hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
        });
      }
    }
  };
  walk(dir);
  return assets;
}

/** On every answer under /console: its files, the redirect, and its 404s alike. */
const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function send(reply: FastifyReply, asset: Asset): FastifyReply {
  return reply.header('content-type', asset.contentType).header('cache-control', asset.cacheControl).send(asset.body);
}

/**
 * `GET /console` (redirected to `/console/`), `/console/` (index.html) and `/console/<file>`. Hidden
 * from /docs: they are pages, not API operations. Without a build (running from source) each
 * answers 404 saying how to make one.
 */
export const consoleRoutes =
  (dir: string): FastifyPluginAsyncTypebox =>
  async (app) => {
    const assets = loadConsoleAssets(dir);
    app.addHook('onSend', async (_request, reply, payload) => {
      reply.headers(SECURITY_HEADERS);
      return payload;
    });
    app.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
    app.get('/console/*', { schema: { hide: true } }, async (request, reply) => {
      if (!assets) throw new SluiceError('NOT_FOUND', `the console is not built: run \`npm run build\` (it writes ${dir})`);
      const name = (request.params as { '*': string })['*'] || 'index.html';
      const asset = assets.get(name);
      if (!asset) throw new SluiceError('NOT_FOUND', `no console file ${JSON.stringify(name.slice(0, 100))}`);
      return send(reply, asset);
    });
  };
