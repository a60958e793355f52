/**
 * pino for the HTTP server, the worker and the CLI: one censoring of secrets, one request-line
 * shape, and one rule for the format. A person at a terminal reads pretty lines
 * (pino-pretty); anything else (a pipe, a file, a log shipper) and production always get
 * one JSON object per line.
 */
import type { FastifyBaseLogger } from 'fastify';
import { pino, type DestinationStream, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

export type Logger = FastifyBaseLogger;

export type LogFormat = 'json' | 'pretty';

const CENSOR = '[redacted]';

/** Headers that carry a credential: their values never reach a log line. */
const SECRET_HEADERS = ['authorization', 'cookie', 'x-csrf-token', 'idempotency-key', 'set-cookie'];

/** Fields that carry a secret, one level down in whatever a line logs (`input.password`, `err.token`). */
const SECRET_FIELDS = ['password', 'secret', 'key', 'token', 'apiKey', 'csrfToken', 'checkoutToken'];

/** The headers with every credential's value replaced; the same object when there is none. */
function censorHeaders(headers: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!headers) return headers;
  let censored: Record<string, unknown> | undefined;
  for (const name of SECRET_HEADERS) {
    if (headers[name] === undefined) continue;
    censored ??= { ...headers };
    censored[name] = CENSOR;
  }
  return censored ?? headers;
}

/** A value with its secret fields replaced (an error keeps its type, message and stack); the same value when it has none. */
function censorFields(value: object): object {
  let censored: Record<string, unknown> | undefined;
  for (const field of SECRET_FIELDS) {
    if (!(field in value) || (value as Record<string, unknown>)[field] === undefined) continue;
    censored ??=
      value instanceof Error
        ? { type: value.name, message: value.message, stack: value.stack, ...(value as object) }
        : { ...value };
    censored[field] = CENSOR;
  }
  return censored ?? value;
}

/**
 * Every line's object, before its serializers: the secret fields of each value it holds replaced
 * (what pino's `*.password` redaction did, without its per-line copy of the paths; a tenth of
 * the License API's request time went to it).
 */
function censorLine(object: Record<string, unknown>): Record<string, unknown> {
  let censored: Record<string, unknown> | undefined;
  for (const name in object) {
    const value = object[name];
    if (value === null || typeof value !== 'object') continue;
    const clean = censorFields(value);
    if (clean === value) continue;
    censored ??= { ...object };
    censored[name] = clean;
  }
  return censored ?? object;
}

/**
 * Query parameters whose value is a credential or personal (checkout tokens, signed links,
 * API keys passed where a header belongs, buyer e-mails, codes): the name says so.
 */
const SECRET_QUERY = /([?&](?:[\w.-]*(?:token|secret|password|api_?key|sig)[\w.-]*|key|code|email)=)[^&#]*/gi;

export function redactUrl(url: string | undefined): string | undefined {
  return url && url.includes('?') ? url.replace(SECRET_QUERY, '$1[redacted]') : url;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/** Requests are logged with the path the client sent and their headers (credentials censored), so a failed call can be traced. */
const serializers = {
  req: (req: LoggedRequest) => ({
    method: req.method,
    url: redactUrl(req.url),
    remoteAddress: req.ip,
    headers: censorHeaders(req.headers),
  }),
  res: (res: { headers?: Record<string, unknown> } & Record<string, unknown>) =>
    res.headers ? { ...res, headers: censorHeaders(res.headers) } : res,
};

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    formatters: { log: censorLine },
    serializers,
  };
}

/**
 * JSON in production whatever is asked; otherwise LOG_FORMAT when set, else pretty when
 * standard output is a terminal.
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTerminal = process.stdout.isTTY === true): LogFormat {
  if (env.NODE_ENV === 'production') return 'json';
  if (env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty') return env.LOG_FORMAT;
  return isTerminal ? 'pretty' : 'json';
}

interface PrettyLine {
  msg?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/** A request line reads `GET /api/store/demo 200 3.1 ms`; other lines keep their message. */
function prettyMessage(line: PrettyLine, messageKey: string): string {
  const message = String((line as Record<string, unknown>)[messageKey] ?? '');
  if (line.req && line.res && typeof line.responseTime === 'number') {
    return `${line.req.method} ${line.req.url} ${line.res.statusCode} ${line.responseTime.toFixed(1)} ms`;
  }
  return message;
}

function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  return pretty({
    colorize: process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,req,res,responseTime,reqId',
    messageFormat: prettyMessage as never,
    singleLine: true,
    // Written as each line comes: a crash loses nothing, and lines keep their order with stderr.
    sync: true,
    ...(destination ? { destination } : {}),
  });
}

/** Log lines are written in blocks of this size (a busy server)... */
const LOG_BLOCK_BYTES = 8192;
/** ...or after this long (a quiet one). */
const LOG_FLUSH_MS = 100;

export function createLogger(
  level: string,
  opts: { format?: LogFormat; destination?: DestinationStream } = {},
): Logger {
  const format = opts.format ?? logFormat();
  const stream = format === 'pretty' ? prettyStream(opts.destination) : opts.destination;
  // JSON to stdout, written asynchronously in blocks: lines wait for 8 KiB of others, or for at most
  // LOG_FLUSH_MS, and go out in one write (one system call per request line was a tenth of a busy
  // server's CPU; one write per few lines still cost a License API validation 4 %). pino flushes
  // what is pending when the process exits.
  return pino(
    loggerOptions(level),
    stream ?? pino.destination({ dest: 1, sync: false, minLength: LOG_BLOCK_BYTES, periodicFlush: LOG_FLUSH_MS }),
  ) as unknown as Logger;
}
