/** pino options shared by the HTTP server and the CLI: one redaction list. */
import type { FastifyBaseLogger } from 'fastify';
import { pino, type LoggerOptions } from 'pino';

export type Logger = FastifyBaseLogger;

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'req.headers["idempotency-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.secret',
  '*.key',
  '*.token',
  '*.apiKey',
  '*.csrfToken',
  '*.checkoutToken',
];

/** Query parameters that carry credentials (checkout tokens, signed links, buyer e-mails). */
const SECRET_QUERY = /([?&](?:token|sig|email|code)=)[^&#]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[redacted]');
}

/** Requests are logged with their headers (after redaction) so a failed call can be traced. */
const serializers = {
  req: (req: { method?: string; url?: string; ip?: string; headers?: Record<string, unknown> }) => ({
    method: req.method,
    url: redactUrl(req.url),
    remoteAddress: req.ip,
    headers: req.headers,
  }),
};

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers,
  };
}

export function createLogger(level: string): Logger {
  return pino(loggerOptions(level)) as unknown as Logger;
}
