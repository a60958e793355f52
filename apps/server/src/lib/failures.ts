/**
 * A failure of the `svc` command as one sentence a person can act on: what could not be done
 * and, where we can tell, what to do about it. Used for start-up and operator-command failures;
 * request errors go through errors.ts.
 */

/**
 * A failure whose message is the whole story for a person, said as it is (the configuration's
 * ConfigError, the embedded database's EmbeddedDatabaseError). The kinds extend it where they are
 * thrown, so this file needs to know none of them.
 */
export class ExplainedFailure extends Error {}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and its causes (and an AggregateError's members), outermost first. */
function chain(error: unknown): ErrorLike[] {
  const found: ErrorLike[] = [];
  const visit = (value: unknown, depth: number) => {
    if (!value || typeof value !== 'object' || depth > 6) return;
    const e = value as ErrorLike;
    found.push(e);
    if (Array.isArray(e.errors)) for (const inner of e.errors) visit(inner, depth + 1);
    visit(e.cause, depth + 1);
  };
  visit(error, 0);
  return found;
}

const where = (e: ErrorLike) =>
  typeof e.address === 'string' ? ` at ${e.address}${typeof e.port === 'number' ? `:${e.port}` : ''}` : '';

const firstLine = (text: string) => text.split('\n')[0]!.trim();

/** True when the sentence is the whole story (no stack trace would help the operator). */
export function isExplained(error: unknown): boolean {
  return error instanceof ExplainedFailure || describeKnown(error) !== undefined;
}

function describeKnown(error: unknown): string | undefined {
  for (const e of chain(error)) {
    switch (e.code) {
      case 'ECONNREFUSED':
        return `nothing answers${where(e)} (connection refused): start PostgreSQL, or check DATABASE_URL`;
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `the host${where(e) || ' of DATABASE_URL'} cannot be resolved: check DATABASE_URL`;
      case 'ETIMEDOUT':
        return `the database${where(e)} did not answer in time: check DATABASE_URL and the network`;
      case '28P01':
      case '28000':
        return 'PostgreSQL refused the user or password in DATABASE_URL';
      case '3D000':
        return `the database named in DATABASE_URL does not exist: create it (createdb) or fix the URL`;
      case '57P03':
        return 'PostgreSQL is starting up or shutting down: try again in a moment';
      case 'EADDRINUSE':
        return `the address${where(e)} is in use by another process: stop it, or set PORT`;
      case 'EACCES':
        return `permission denied${where(e)}: ${typeof e.message === 'string' ? firstLine(e.message) : 'check the data directory and the port'}`;
      default:
    }
    if (e.name === 'KnexTimeoutError')
      return 'no database connection could be had in time: check that PostgreSQL answers at DATABASE_URL';
  }
  return undefined;
}

export function describeFailure(error: unknown): string {
  if (error instanceof ExplainedFailure) return error.message;
  const known = describeKnown(error);
  if (known) return known;
  const message = (error as ErrorLike | null)?.message;
  return typeof message === 'string' && message.trim() ? firstLine(message) : String(error);
}
