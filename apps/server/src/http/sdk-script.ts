/**
 * `GET /sdk/v1/theme.js`: the SDK's theme client (`@svc/sdk/theme`) as one minified ES module,
 * for a theme without a bundler:
 *
 * ```html
 * <script type="module">
 *   import { createThemeClient } from 'https://<service>/sdk/v1/theme.js';
 * </script>
 * ```
 *
 * The bytes are the SDK build's (packages/sdk/scripts/browser-build.mjs writes
 * packages/sdk/dist/browser/theme.js), read once at start: the SDK builds after the server (its
 * API types come from the server's router), so the server cannot copy the file at its own build.
 * v1 is immutable to a browser (a year, `immutable`) and stays compatible: a breaking change to
 * the theme client ships as /sdk/v2/theme.js beside it (docs/decisions.md). Public code, so any
 * origin may load it (a module script is a CORS request) and embed it (CORP cross-origin).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { ifNoneMatchHas, sendNotModified } from './etag.js';
import { plainRoute } from './plain-route.js';

/** packages/sdk/dist/browser/, from apps/server/src/http or apps/server/dist/http alike. */
const SDK_BROWSER_DIST = fileURLToPath(new URL('../../../../packages/sdk/dist/browser/', import.meta.url));

interface Script {
  body: Buffer;
  etag: string;
}

/** The file and its ETag, or undefined when the SDK is not built (the route then answers 404, not a crash). */
function loadScript(file: string): Script | undefined {
  let body: Buffer;
  try {
    body = readFileSync(SDK_BROWSER_DIST + file);
  } catch {
    return undefined;
  }
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

const themeScript = loadScript('theme.js');

function sendScript(reply: FastifyReply, script: Script, ifNoneMatch: string | undefined): FastifyReply {
  reply
    .header('Cache-Control', 'public, max-age=31536000, immutable')
    .header('ETag', script.etag)
    // Also without an Origin header: a shared cache may hand this answer to a cross-origin module load.
    .header('Access-Control-Allow-Origin', '*')
    .header('Cross-Origin-Resource-Policy', 'cross-origin');
  if (ifNoneMatchHas(ifNoneMatch, script.etag)) return sendNotModified(reply);
  return reply.type('text/javascript; charset=utf-8').send(script.body);
}

export const sdkThemeScriptRoute = plainRoute({
  name: 'sdk.themeScript',
  method: 'GET',
  path: '/sdk/v1/theme.js',
  body: 'none',
  policy: { auth: { kind: 'public', audience: 'storefront' }, csrf: 'none', cors: 'open', errors: ['not_found'] },
  openapi: false,
  async handler(_ctx, request, reply) {
    if (!themeScript) return reply.callNotFound();
    return sendScript(reply, themeScript, request.headers['if-none-match']);
  },
});
