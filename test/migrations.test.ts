/**
 * The entities are the schema: the migrations build exactly what the entities declare (MikroORM's
 * own generator finds nothing to change), and a database built by the six hand-written migrations
 * the baseline replaced, wholly or partly, is brought to the very same schema with its rows intact.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MikroORM, ReferenceKind } from '@mikro-orm/postgresql';
import pg from 'pg';
import { migrate, openOrm, ormOptions, type Orm } from '../apps/server/src/db/orm.js';
import { MIGRATIONS } from '../apps/server/src/db/migrations/index.js';
import { LEGACY_MIGRATIONS } from '../apps/server/src/db/migrations/legacy/index.js';
import { seedDemo } from '../apps/server/src/seed-demo.js';
import { freshDatabase } from './support/databases.js';
import { serviceContext } from './support/in-process.js';

const drops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const drop of drops) await drop();
});

async function database(): Promise<string> {
  const db = await freshDatabase();
  drops.push(db.drop);
  return db.url;
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function withOrm<T>(url: string, run: (orm: Orm) => Promise<T>): Promise<T> {
  const orm = await openOrm(url, { poolMax: 2 });
  try {
    return await run(orm);
  } finally {
    await orm.close();
  }
}

/** Runs the first `count` legacy migrations, as a server of an earlier release did. */
async function legacyMigrate(url: string, count: number): Promise<void> {
  const options = ormOptions(url, { poolMax: 1 });
  const orm = await MikroORM.init({
    ...options,
    migrations: { ...options.migrations, migrationsList: LEGACY_MIGRATIONS.slice(0, count) },
  });
  try {
    await orm.getMigrator().up();
  } finally {
    await orm.close();
  }
}

/** Everything about the schema PostgreSQL can tell: columns, constraints, indexes, sequences. */
async function schemaOf(url: string) {
  return withClient(url, async (client) => {
    const rows = async (sql: string) =>
      (await client.query(sql)).rows.map((row) => Object.values(row).join(' | ')).sort();
    return {
      columns: await rows(`
        select c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid)
        from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where n.nspname = 'public' and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped`),
      constraints: await rows(`
        select c.relname, k.conname, pg_get_constraintdef(k.oid)
        from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'public'`),
      indexes: await rows(`select tablename, indexname, indexdef from pg_indexes where schemaname = 'public'`),
      sequences: await rows(
        `select sequencename, data_type, start_value, increment_by, last_value from pg_sequences where schemaname = 'public'`,
      ),
    };
  });
}

/**
 * Each table's row count and a digest of its rows (the migrations' bookkeeping aside); with
 * `columns`, of those columns only (a later migration may add columns to a table with rows).
 */
async function contentsOf(
  url: string,
  columns?: Record<string, string[]>,
): Promise<{ summary: Record<string, string>; columns: Record<string, string[]> }> {
  return withClient(url, async (client) => {
    const { rows: found } = await client.query<{ table: string; columns: string[] }>(
      `select table_name as table, array_agg(column_name::text order by column_name) as columns from information_schema.columns
       where table_schema = 'public' and table_name <> 'mikro_orm_migrations' group by 1 order by 1`,
    );
    const out = { summary: {} as Record<string, string>, columns: {} as Record<string, string[]> };
    for (const { table, columns: all } of found) {
      const picked = columns ? columns[table] : all;
      if (!picked) continue;
      const row = `row(${picked.map((column) => `t."${column}"`).join(', ')})::text`;
      const { rows } = await client.query<{ n: string; digest: string }>(
        `select count(*) as n, md5(coalesce(string_agg(${row}, E'\\n' order by ${row}), '')) as digest from "${table}" t`,
      );
      out.summary[table] = `${rows[0]!.n} rows ${rows[0]!.digest}`;
      out.columns[table] = picked;
    }
    return out;
  });
}

async function appliedMigrations(url: string): Promise<string[]> {
  return withClient(url, async (client) =>
    (await client.query<{ name: string }>('select name from mikro_orm_migrations order by id')).rows.map(
      (row) => row.name,
    ),
  );
}

let baselineSchema: Awaited<ReturnType<typeof schemaOf>> | undefined;
/** The schema of a database the migrations built from nothing. */
async function freshSchema() {
  if (!baselineSchema) {
    const url = await database();
    await withOrm(url, (orm) => migrate(orm));
    baselineSchema = await schemaOf(url);
  }
  return baselineSchema;
}

describe('migrations', () => {
  it('build from nothing exactly the schema the entities declare: the generator finds nothing to change', async () => {
    const url = await database();
    await withOrm(url, async (orm) => {
      expect(await migrate(orm)).toEqual(MIGRATIONS.map((m) => m.name));
      expect(await orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe('');
      // A second start has nothing to do.
      expect(await migrate(orm)).toEqual([]);
    });
    const schema = await freshSchema();
    // The constraints that make a double sale and a double settlement impossible are in the
    // entities, so the generator keeps them.
    const constraints = schema.constraints.join('\n');
    expect(constraints).toContain('license_key | license_key_product_value_unique | UNIQUE (product_id, value_hash)');
    expect(constraints).toMatch(/license_key \| license_key_assignment_check \| CHECK/);
    expect(constraints).toContain('payment_notification | payment_notification_pkey | PRIMARY KEY (gateway, event_id)');
    expect(constraints).toContain(
      'webhook_delivery | webhook_delivery_attempt_unique | UNIQUE (webhook_id, event_id, attempt)',
    );
    expect(constraints).toContain('feedback | feedback_order_id_unique | UNIQUE (order_id)');
    const indexes = schema.indexes.join('\n');
    expect(indexes).toMatch(/payment_gateway_ref_unique \| CREATE UNIQUE INDEX .* WHERE \(provider_ref IS NOT NULL\)/);
    expect(indexes).toMatch(/coupon_store_mode_code_unique \| CREATE UNIQUE INDEX .*lower\(\(code\)::text\)/);
    // Order numbers start at ORD-1001.
    expect(schema.sequences.join('\n')).toMatch(/^order_number_seq \| bigint \| 1001 \| 1 \| $/m);
  });

  it('three servers starting on one empty database migrate it once: one applies every migration, the others wait and find nothing to do', async () => {
    const url = await database();
    const results = await Promise.all([1, 2, 3].map(() => withOrm(url, (orm) => migrate(orm))));
    expect(results.map((names) => names.length).sort((x, y) => x - y)).toEqual([0, 0, MIGRATIONS.length]);
    expect(results.flat().sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
    expect(await appliedMigrations(url)).toEqual(MIGRATIONS.map((m) => m.name));
  });

  it('adopt a database of the six hand-written migrations, full of data: same schema, every row intact', async () => {
    const url = await database();
    await legacyMigrate(url, LEGACY_MIGRATIONS.length);
    await seedWithTodaysCode(url, async (orm) => {
      const ctx = serviceContext(orm);
      await seedDemo({ deps: ctx.deps, close: () => Promise.resolve() });
    });
    await fillEmptyTables(url);
    const before = await contentsOf(url);
    // Every table holds rows, so "intact" means something.
    expect(Object.entries(before.summary).filter(([, summary]) => summary.startsWith('0 rows'))).toEqual([]);

    const applied = await withOrm(url, (orm) => migrate(orm));
    expect(applied).toEqual([`${MIGRATIONS[0]!.name} (adopted)`, ...MIGRATIONS.slice(1).map((m) => m.name)]);
    // The rows of every table the legacy schema had, in the columns it had: later migrations may add columns.
    expect(await contentsOf(url, before.columns)).toEqual(before);
    expect(await appliedMigrations(url)).toEqual([...LEGACY_MIGRATIONS, ...MIGRATIONS].map((m) => m.name));
    expect(withoutSequenceState(await schemaOf(url))).toEqual(withoutSequenceState(await freshSchema()));
    await withOrm(url, async (orm) => expect(await orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe(''));
  });

  it('finish a database that ran only some of the hand-written migrations, then adopt it', async () => {
    const url = await database();
    await legacyMigrate(url, 2);
    await withClient(url, async (client) => {
      await client.query(
        `insert into "user" (id, email, password_hash, created_at, updated_at) values ('u_legacy', 'legacy@example.com', 'x', now(), now())`,
      );
      await client.query(
        `insert into store (id, name, subdomain, currency, created_at, updated_at) values ('s_legacy', 'Legacy', 'legacy', 'USD', now(), now())`,
      );
      await client.query(
        `insert into store_member (id, store_id, user_id, role, created_at) values ('m_legacy', 's_legacy', 'u_legacy', 'owner', now())`,
      );
      await client.query(
        `insert into "order" (id, store_id, status, product_name, price_minor, currency, customer_email, created_at, updated_at) values ('o_legacy', 's_legacy', 'pending', 'Old', 500, 'USD', 'b@example.com', now(), now())`,
      );
    });
    const before = await contentsOf(url);

    const applied = await withOrm(url, (orm) => migrate(orm));
    expect(applied).toEqual([
      ...LEGACY_MIGRATIONS.slice(2).map((m) => m.name),
      `${MIGRATIONS[0]!.name} (adopted)`,
      ...MIGRATIONS.slice(1).map((m) => m.name),
    ]);
    expect((await contentsOf(url, before.columns)).summary).toEqual(before.summary);
    expect(withoutSequenceState(await schemaOf(url))).toEqual(withoutSequenceState(await freshSchema()));
    await withClient(url, async (client) => {
      const { rows } = await client.query(`select number from "order" where id = 'o_legacy'`);
      expect(rows).toEqual([{ number: '1001' }]);
    });
  });
});

/**
 * Runs `seed` (today's code, through the ORM) against a database of an older schema: the tables and
 * columns today's entities have and that schema lacks are added, nullable, for the seed and dropped
 * after it, so the rows left are ones an older release could have written.
 */
async function seedWithTodaysCode(url: string, seed: (orm: Orm) => Promise<void>): Promise<void> {
  const added: Array<[table: string, column: string]> = [];
  const createdTables: string[] = [];
  await withOrm(url, async (orm) => {
    await withClient(url, async (client) => {
      const { rows } = await client.query<{ table_name: string; column_name: string }>(
        `select table_name, column_name from information_schema.columns where table_schema = 'public'`,
      );
      const tables = new Set(rows.map((row) => row.table_name));
      const columns = new Set(rows.map((row) => `${row.table_name}.${row.column_name}`));
      for (const meta of Object.values(orm.getMetadata().getAll())) {
        if (!meta.tableName) continue;
        // A table today's code reads that the schema lacks (a statement naming it is planned even
        // when it reads no row of it): made for the seed, with the columns below, dropped after it.
        if (!tables.has(meta.tableName)) {
          await client.query(`create table "${meta.tableName}" ()`);
          tables.add(meta.tableName);
          createdTables.push(meta.tableName);
        }
        for (const prop of meta.props) {
          if (
            prop.persist === false ||
            prop.kind === ReferenceKind.ONE_TO_MANY ||
            prop.kind === ReferenceKind.MANY_TO_MANY ||
            !prop.fieldNames
          )
            continue;
          for (const [i, field] of prop.fieldNames.entries()) {
            if (columns.has(`${meta.tableName}.${field}`)) continue;
            // A serial column (an event's seq) fills itself and cannot be declared null.
            const type = prop.columnTypes[i]!;
            await client.query(
              `alter table "${meta.tableName}" add column "${field}" ${type}${/serial$/.test(type) ? '' : ' null'}`,
            );
            // Today's code may lean on the column's uniqueness (ON CONFLICT on a dedupe key); dropped with the column.
            if (prop.unique) await client.query(`create unique index on "${meta.tableName}" ("${field}")`);
            added.push([meta.tableName, field]);
          }
        }
      }
    });
    await seed(orm);
  });
  await withClient(url, async (client) => {
    for (const [table, column] of added) await client.query(`alter table "${table}" drop column "${column}"`);
    for (const table of createdTables) await client.query(`drop table "${table}"`);
  });
}

/** How far a sequence has counted is data, not schema. */
function withoutSequenceState(schema: Awaited<ReturnType<typeof schemaOf>>) {
  return { ...schema, sequences: schema.sequences.map((line) => line.split(' | ').slice(0, 4).join(' | ')) };
}

/** A row in each table the demo store leaves empty (the rows are whatever the columns allow). */
async function fillEmptyTables(url: string): Promise<void> {
  await withClient(url, async (client) => {
    const ids = async (sql: string) => (await client.query(sql)).rows[0] as Record<string, string>;
    const { store, owner, order, product } = await ids(
      `select s.id as store, m.user_id as owner, o.id as "order", p.id as product from store s join store_member m on m.store_id = s.id join "order" o on o.store_id = s.id join product p on p.store_id = s.id limit 1`,
    );
    const empty = async (table: string) => (await client.query(`select 1 from "${table}" limit 1`)).rowCount === 0;
    const rows: Record<string, [string, unknown[]]> = {
      session: [
        `insert into session (id_hash, user_id, csrf_token, created_at, expires_at) values (repeat('a', 64), $1, 'c', now(), now())`,
        [owner],
      ],
      password_reset: [
        `insert into password_reset (token_hash, user_id, created_at, expires_at) values (repeat('b', 64), $1, now(), now())`,
        [owner],
      ],
      customer_code: [
        `insert into customer_code (id, store_id, email, code_hash, attempts, created_at, expires_at) values ('cc_x', $1, 'c@example.com', repeat('c', 64), 0, now(), now())`,
        [store],
      ],
      customer: [
        `insert into customer (id, store_id, email, created_at) values ('cu_x', $1, 'c@example.com', now())`,
        [store],
      ],
      customer_session: [
        `insert into customer_session (id_hash, customer_id, created_at, expires_at) select repeat('d', 64), id, now(), now() from customer limit 1`,
        [],
      ],
      feedback: [
        `insert into feedback (id, store_id, order_id, rating, text, created_at) values ('fb_x', $1, $2, 5, 'good', now())`,
        [store, order],
      ],
      track_event: [
        `insert into track_event (id, store_id, type, product_id, created_at) values ('te_x', $1, 'view', $2, now())`,
        [store, product],
      ],
      payment_notification: [
        `insert into payment_notification (gateway, event_id, order_id, kind, outcome, received_at) values ('stripe', 'evt_x', $1, 'paid', 'settled', now())`,
        [order],
      ],
      ticket: [
        `insert into ticket (id, store_id, order_id, subject, status, created_at, updated_at) values ('t_x', $1, $2, 'help', 'open', now(), now())`,
        [store, order],
      ],
      ticket_message: [
        `insert into ticket_message (id, ticket_id, author, body, created_at) select 'tm_x', id, 'buyer', 'hi', now() from ticket limit 1`,
        [],
      ],
      blacklist_entry: [
        `insert into blacklist_entry (id, store_id, kind, value, created_at) values ('bl_x', $1, 'email', 'x@example.com', now())`,
        [store],
      ],
      webhook_delivery: [
        `insert into webhook_delivery (id, webhook_id, store_id, event_id, event, attempt, status, due_at, created_at, updated_at) select 'wd_x', w.id, w.store_id, e.id, e.type, 1, 'success', now(), now(), now() from webhook w, (select id, type from event limit 1) e limit 1`,
        [],
      ],
      idempotency_key: [
        `insert into idempotency_key (path, scope, key_hash, body_hash, claim, status, response, created_at, claimed_at, completed_at) values ('/api/x', $1, repeat('e', 64), repeat('f', 64), 'cl', 200, '{}', now(), now(), now())`,
        [store],
      ],
      file: [
        `insert into file (id, store_id, name, content_type, size, sha256, storage_key, created_at) values ('f_x', $1, 'a.txt', 'text/plain', 1, repeat('0', 64), 'k', now())`,
        [store],
      ],
      outbound_email: [
        `insert into outbound_email (id, "to", subject, text, created_at) values ('em_x', 'c@example.com', 's', 't', now())`,
        [],
      ],
    };
    for (const [table, [sql, params]] of Object.entries(rows)) if (await empty(table)) await client.query(sql, params);
  });
}
