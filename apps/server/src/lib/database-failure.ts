/**
 * What a log may say of a database's refusal: the fields of PostgreSQL's error that name things
 * (SQLSTATE, constraint, table, column), never a value. MikroORM writes a statement's parameters
 * into its text before sending it, and its error's message starts with that text
 * (`insert into "product" (...) values (...) - duplicate key ...`); PostgreSQL's `detail` quotes
 * the key or row it refused (`Key (slug)=(x) already exists.`, `Failing row contains (...)`).
 * Both may hold what a seller sells or a buyer typed.
 */

export interface DatabaseFailure {
  /** The SQLSTATE (`23505` unique, `23503` foreign key, `57P01` shutdown...); absent when the failure was the connection's. */
  sqlState?: string;
  /** The error class the ORM gave it (`UniqueConstraintViolationException`), when it did. */
  type?: string;
  constraint?: string;
  table?: string;
  column?: string;
  /** The function of PostgreSQL that refused (`_bt_check_unique`, `ri_ReportViolation`). */
  routine?: string;
  /** Without a SQLSTATE: the driver's own words after the statement (`Connection terminated unexpectedly`)... */
  reason?: string;
  /** ...and its code, when it has one (`ECONNREFUSED`). */
  code?: string;
}

interface PostgresFields {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  sqlState?: unknown;
  severity?: unknown;
  constraint?: unknown;
  table?: unknown;
  column?: unknown;
  routine?: unknown;
  cause?: unknown;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** MikroORM's DriverException and its kinds (@mikro-orm/core's exceptions): their message starts with the statement. */
const DRIVER_EXCEPTIONS = new Set([
  'DriverException',
  'ConnectionException',
  'ServerException',
  'ConstraintViolationException',
  'CheckConstraintViolationException',
  'ForeignKeyConstraintViolationException',
  'NotNullConstraintViolationException',
  'UniqueConstraintViolationException',
  'DatabaseObjectExistsException',
  'DatabaseObjectNotFoundException',
  'DeadlockException',
  'InvalidFieldNameException',
  'LockWaitTimeoutException',
  'NonUniqueFieldNameException',
  'ReadOnlyException',
  'SyntaxErrorException',
  'TableExistsException',
  'TableNotFoundException',
]);

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The database error in `error` or its causes (node-postgres's DatabaseError, or MikroORM's
 * DriverException with PostgreSQL's fields copied on), as what names things; undefined when
 * there is none. A network failure (`EPIPE`) has no severity and is not one unless the ORM
 * wrapped it.
 */
export function databaseFailure(error: unknown): DatabaseFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const e = current as PostgresFields;
    const sqlState =
      text(e.sqlState) ??
      (typeof e.code === 'string' && SQLSTATE.test(e.code) && text(e.severity) ? e.code : undefined);
    if (sqlState || DRIVER_EXCEPTIONS.has(String(e.name))) {
      const failure: Record<string, string> = {};
      if (sqlState) failure.sqlState = sqlState;
      const named = { type: e.name, constraint: e.constraint, table: e.table, column: e.column, routine: e.routine };
      for (const [key, value] of Object.entries(named)) if (text(value)) failure[key] = value as string;
      if (!sqlState) {
        // The driver's words follow the statement: the last ` - ` is inside them or before them.
        const message = text(e.message) ?? '';
        const cut = message.lastIndexOf(' - ');
        failure.reason = cut < 0 ? message : message.slice(cut + 3);
        if (text(e.code)) failure.code = e.code as string;
      }
      return failure;
    }
    current = e.cause;
  }
  return undefined;
}

/** An error's stack without its message lines: the frames say where, and hold no value. */
export function framesOf(error: unknown): string | undefined {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string') return undefined;
  return stack
    .split('\n')
    .filter((line) => line.trim().startsWith('at '))
    .join('\n');
}
