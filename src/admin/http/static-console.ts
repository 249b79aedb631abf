import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MiddlewareHandler } from 'hono';
import { CONSOLE_CSP } from './security-headers.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** API, metrics and probe paths: never a console file. */
export const NOT_CONSOLE = /^\/(api|metrics|healthz|readyz)(\/|$)/;

/** The console shipped with the package (`console/` next to `src/` or `dist/`), if present. */
export function defaultConsoleDir(): string | undefined {
  const dir = fileURLToPath(new URL('../../../console/', import.meta.url));
  return existsSync(resolve(dir, 'index.html')) ? dir : undefined;
}

/**
 * Serves the console's static files without a credential (they hold no data): `index.html` at `/`,
 * other files by exact path. Anything else falls through to the authenticated routes.
 */
export function staticConsole(dir: string | undefined): MiddlewareHandler {
  const root = dir === undefined ? undefined : resolve(dir);
  return async (c, next) => {
    const method = c.req.method;
    if (!root || (method !== 'GET' && method !== 'HEAD') || NOT_CONSOLE.test(c.req.path)) return next();
    const file = resolveFile(root, c.req.path);
    if (!file) return next();
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return next();
    const body = method === 'HEAD' ? null : await readFile(file);
    return new Response(body, {
      status: 200,
      headers: {
        'Content-Type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Security-Policy': CONSOLE_CSP,
        // The page is tiny; always revalidate so a deploy is picked up at once.
        'Cache-Control': 'no-cache',
      },
    });
  };
}

function resolveFile(root: string, path: string): string | undefined {
  let rel: string;
  try {
    rel = decodeURIComponent(path === '/' ? '/index.html' : path).slice(1);
  } catch {
    return undefined;
  }
  if (rel.includes('\0') || rel.includes('\\') || rel.split('/').some((s) => s === '' || s.startsWith('.'))) {
    return undefined;
  }
  const full = resolve(root, rel);
  return full.startsWith(root + sep) ? full : undefined;
}
