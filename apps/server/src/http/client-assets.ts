/**
 * The files the server's own pages are served with (the storefront's and the buyer pages'
 * stylesheets and modules), read once at start from the package: a missing build is a 404, not
 * a crash. Each stylesheet goes out with the design tokens (`@svc/tokens`) in front of it, the
 * same custom properties the dashboard's theme reads.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A file of the server package (`client/…`, `dist/…`, `src/…`), or undefined when it is not there. */
export function loadAsset(relative: string): Buffer | undefined {
  try {
    return readFileSync(PACKAGE_ROOT + relative);
  } catch {
    return undefined;
  }
}

const tokens = readFileSync(createRequire(import.meta.url).resolve('@svc/tokens/tokens.css'));

/** A stylesheet of `client/`, the design tokens first. */
export function loadStylesheet(relative: string): Buffer | undefined {
  const own = loadAsset(relative);
  return own && Buffer.concat([tokens, Buffer.from('\n'), own]);
}
