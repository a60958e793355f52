/**
 * One HTTP attempt to a webhook receiver. The URL is checked again at send time and the
 * connection goes to the address that was checked (no second DNS answer in between); TLS
 * still names the host (SNI, certificate check) and the Host header is unchanged.
 * Redirects are never followed, the whole attempt has one time budget, and at most ~1 KB of
 * the answer is read: a receiver that answers with megabytes costs us one socket read.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '../../lib/errors.js';
import { parseReceiverUrl, resolveReceiver } from '../../lib/outbound-url.js';

/** What the log keeps of the receiver's answer (docs/decisions.md: a preview of at most 1 KB). */
export const PREVIEW_BYTES = 1024;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  production: boolean;
  timeoutMs: number;
}

export interface SendResult {
  /** A 2xx answer. */
  ok: boolean;
  statusCode: number | null;
  bodyPreview: string | null;
  errorMessage: string | null;
  durationMs: number;
  /** The receiver's `Retry-After`, in ms from now, when it sent a usable one. */
  retryAfterMs: number | null;
  /** The headers the request went out with; null when none went out (the URL was refused). */
  requestHeaders: Record<string, string> | null;
}

/** Kept-alive connections per process; a pooled socket is connected to an address that was checked. */
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 }),
};

/** `Retry-After` as delta-seconds or an HTTP date, in ms from `now`; null when absent or unusable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function describeError(error: unknown): string {
  const e = error as NodeJS.ErrnoException & { reason?: string };
  switch (e?.code) {
    case 'ECONNREFUSED':
      return 'Connection refused.';
    case 'ECONNRESET':
      return 'Connection reset by the receiver.';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'The receiver cannot be reached.';
    case 'ETIMEDOUT':
      return 'Connection timed out.';
    case 'EPROTO':
    case 'ERR_SSL_WRONG_VERSION_NUMBER':
      return 'TLS handshake failed.';
    default:
      if (
        (typeof e?.code === 'string' && e.code.startsWith('ERR_TLS')) ||
        /certificate|self[- ]signed/i.test(e?.message ?? '')
      ) {
        return clip(`TLS error: ${e.message}`, 500);
      }
      return clip(e?.message ? `Request failed: ${e.message}` : 'Request failed.', 500);
  }
}

/** The preview as text: complete UTF-8 characters only, no NUL (PostgreSQL text refuses it). */
function previewText(chunks: Buffer[]): string {
  const bytes = Buffer.concat(chunks).subarray(0, PREVIEW_BYTES);
  return new StringDecoder('utf8').write(bytes).replaceAll('\u0000', '\uFFFD');
}

/** POSTs `body` to the receiver and says what happened; never throws. */
export async function sendToReceiver(outgoing: SendRequest, now: Date): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (
    errorMessage: string,
    statusCode: number | null = null,
    bodyPreview: string | null = null,
  ): SendResult => ({
    ok: false,
    statusCode,
    bodyPreview,
    errorMessage,
    durationMs: elapsed(),
    retryAfterMs: null,
    requestHeaders: null,
  });

  let target: Awaited<ReturnType<typeof resolveReceiver>>;
  try {
    target = await resolveReceiver(parseReceiverUrl(outgoing.url, outgoing.production), outgoing.production);
  } catch (error) {
    if (error instanceof AppError) return failed(`URL not allowed: ${error.message}`);
    return failed(describeError(error));
  }
  const { url, address, family } = target;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const secure = url.protocol === 'https:';
  // Whatever name the socket layer asks for, it gets the address that was checked.
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };

  const payload = Buffer.from(outgoing.body, 'utf8');
  const requestHeaders = { ...outgoing.headers, host: url.host, 'content-length': String(payload.length) };
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    /** Once the answer's head is in: concludes with what has been read so far. */
    let concludeResponse: (() => void) | undefined;
    // From here on the request is on its way: every outcome carries the headers it went with.
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      result.requestHeaders = requestHeaders;
      resolve(result);
    };
    const options: https.RequestOptions = {
      method: 'POST',
      protocol: url.protocol,
      hostname: host,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: requestHeaders,
      agent: secure ? agents.https : agents.http,
      lookup,
      ...(secure && !isIP(host) ? { servername: host } : {}),
    };
    const req = (secure ? https : http).request(options, (res) => {
      const statusCode = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      /** `cutShort`: the receiver closed the connection before its answer was complete. */
      const done = (cutShort = false) => {
        const bodyPreview = previewText(chunks);
        if (cutShort) {
          // An incomplete answer (RFC 9112 section 8) is no acknowledgement, whatever its status line said.
          finish(
            failed(
              `The receiver closed the connection before its answer was complete (${statusCode}).`,
              statusCode,
              bodyPreview,
            ),
          );
          return;
        }
        if (statusCode >= 200 && statusCode < 300) {
          finish({
            ok: true,
            statusCode,
            bodyPreview,
            errorMessage: null,
            durationMs: elapsed(),
            retryAfterMs: null,
            requestHeaders,
          });
          return;
        }
        const location = res.headers.location;
        const errorMessage =
          statusCode >= 300 && statusCode < 400
            ? `Redirect not followed (${statusCode}${location ? ` to ${clip(location, 200)}` : ''}).`
            : `The receiver answered ${statusCode}.`;
        finish({
          ok: false,
          statusCode,
          bodyPreview,
          errorMessage,
          durationMs: elapsed(),
          retryAfterMs:
            statusCode === 429 || statusCode === 503 ? parseRetryAfter(res.headers['retry-after'], now) : null,
          requestHeaders,
        });
      };
      concludeResponse = () => done();
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        chunks.push(chunk);
        size += chunk.length;
        if (size > PREVIEW_BYTES) {
          // Enough for the preview: stop reading and drop the connection rather than drain the rest.
          done();
          req.destroy();
        }
      });
      res.on('end', () => done());
      res.on('error', () => done(!res.complete));
      res.on('aborted', () => done(!res.complete));
    });
    const timer = setTimeout(() => {
      // The status is known once the head arrived; a body that trickles only shortens the preview.
      if (concludeResponse) concludeResponse();
      else finish(failed(`Timed out after ${outgoing.timeoutMs} ms.`));
      req.destroy();
    }, outgoing.timeoutMs);
    req.on('error', (error) => finish(failed(describeError(error))));
    req.end(payload);
  });
}
