/**
 * Hot-path statements (reads, and writes with RETURNING) as named prepared statements on the
 * ORM's own pool. `em.execute` formats the values into the SQL text (MikroORM's `formatQuery`),
 * so PostgreSQL parses and plans every call anew and each call builds and quotes a new string;
 * here the text is fixed per statement, the values travel as parameters, and each pooled
 * connection parses and plans a statement once (pg keeps it by name). The repositories' hot
 * statements call `preparedRows` with the same `?` placeholders they gave `em.execute`; a list
 * value is one array parameter (`= any(?)`, `unnest(?::text[])`), never `in (?)`.
 *
 * The statement runs where `em.execute` would: inside the EntityManager's transaction when it is
 * in one (on that transaction's connection; like em.execute, the root EntityManager used inside a
 * `transactional` callback is in that transaction, by MikroORM's context), else on a pooled
 * connection of the primary, or of a read replica for `{ replica: true }` (db/replicas.ts). Rows
 * arrive as from `em.execute`: the same connections, so the same type parsers (timestamps as text).
 */
import type { EntityDictionary, EntityManager, EntitySchema, Knex } from '@mikro-orm/postgresql';
import type pg from 'pg';

interface Prepared {
  name: string;
  text: string;
}

/** Statement texts seen so far, by their `?` form; a repository has a handful each, built from fixed parts. */
const statements = new Map<string, Prepared>();

/** More distinct texts than this means a caller builds values into its SQL: a bug, refused. */
const MAX_STATEMENTS = 500;

/** `?` placeholders as `$1, $2, ...`, outside quoted literals and identifiers. */
export function numberPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let quote: string | undefined;
  for (const c of sql) {
    if (quote) {
      if (c === quote) quote = undefined;
      out += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      out += c;
    } else if (c === '?') {
      out += `$${++n}`;
    } else {
      out += c;
    }
  }
  return out;
}

function prepared(sql: string): Prepared {
  let statement = statements.get(sql);
  if (!statement) {
    if (statements.size >= MAX_STATEMENTS)
      throw new Error(`more than ${MAX_STATEMENTS} distinct prepared statements: a caller builds values into its SQL`);
    statement = { name: `svc_${statements.size + 1}`, text: numberPlaceholders(sql) };
    statements.set(sql, statement);
  }
  return statement;
}

/** The rows of a statement (`?` placeholders; a read, or a write with RETURNING), as a named prepared statement. */
export async function preparedRows<T>(
  em: EntityManager,
  sql: string,
  params: readonly unknown[],
  opts: { replica?: boolean } = {},
): Promise<T[]> {
  const { name, text } = prepared(sql);
  const knex: Knex =
    !opts.replica && em.isInTransaction()
      ? em.getTransactionContext<Knex.Transaction>()!
      : em.getConnection(opts.replica ? 'read' : 'write').getKnex();
  // A transaction's client hands out the transaction's connection (and releases nothing).
  const client = knex.client as {
    acquireConnection(): Promise<pg.PoolClient>;
    releaseConnection(connection: pg.PoolClient): Promise<void>;
  };
  const connection = await client.acquireConnection();
  try {
    const result = await connection.query({ name, text, values: params as unknown[] });
    return result.rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * The entity of a statement's one row (`select * from <its table> where id = ? ... for update`,
 * written by the module's repository), merged into `em` as `findOne` with `refresh` would merge it:
 * managed, its snapshot the row, so the flush writes only what the caller then changes. The row
 * locks of the settlement and the billing engine: the ORM would build the same statement anew on
 * every call (criteria, QueryBuilder, knex) and send its values inlined.
 */
export async function preparedEntity<T extends object>(
  em: EntityManager,
  entity: EntitySchema<T>,
  sql: string,
  params: readonly unknown[],
): Promise<T | null> {
  const [row] = await preparedRows<Record<string, unknown>>(em, sql, params);
  return row ? em.map(entity, row as EntityDictionary<T>) : null;
}
