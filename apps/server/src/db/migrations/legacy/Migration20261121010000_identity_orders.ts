import { Migration } from '@mikro-orm/migrations';

/** Sessions, password resets, API keys, orders and lines, customers, the e-mail outbox. */
export class Migration20261121010000_identity_orders extends Migration {
  override up(): void {
    this.addSql(`
      create table "session" (
        "id_hash" varchar(64) primary key,
        "user_id" varchar(32) not null references "user" ("id") on delete cascade,
        "csrf_token" varchar(64) not null,
        "created_at" timestamptz not null,
        "expires_at" timestamptz not null
      );`);
    this.addSql(`create index "session_user_id_index" on "session" ("user_id");`);
    this.addSql(`
      create table "password_reset" (
        "token_hash" varchar(64) primary key,
        "user_id" varchar(32) not null references "user" ("id") on delete cascade,
        "created_at" timestamptz not null,
        "expires_at" timestamptz not null,
        "used_at" timestamptz null
      );`);
    this.addSql(`create index "password_reset_user_id_index" on "password_reset" ("user_id");`);
    this.addSql(`
      create table "api_key" (
        "id" varchar(32) primary key,
        "user_id" varchar(32) not null references "user" ("id") on delete cascade,
        "name" varchar(100) not null,
        "prefix" varchar(16) not null,
        "key_hash" varchar(64) not null,
        "scopes" text[] not null,
        "store_ids" text[] not null,
        "expires_at" timestamptz null,
        "revoked_at" timestamptz null,
        "last_used_at" timestamptz null,
        "created_at" timestamptz not null,
        constraint "api_key_key_hash_unique" unique ("key_hash")
      );`);
    this.addSql(`create index "api_key_user_id_index" on "api_key" ("user_id");`);

    this.addSql(`create sequence "order_number_seq" start 1001;`);
    this.addSql(`
      create table "order" (
        "id" varchar(32) primary key,
        "number" bigint not null default nextval('order_number_seq'),
        "store_id" varchar(32) not null references "store" ("id"),
        "status" text not null check ("status" in ('pending', 'paid', 'processing', 'completed', 'refunded', 'cancelled', 'expired')),
        "product_name" varchar(300) not null,
        "price_minor" bigint not null check ("price_minor" >= 0),
        "paid_minor" bigint not null default 0 check ("paid_minor" >= 0),
        "currency" varchar(3) not null,
        "payment_method" varchar(50) not null default '',
        "customer_email" varchar(320) not null,
        "country" varchar(2) not null default 'XX',
        "buyer_ip" varchar(45) null,
        "user_agent" varchar(512) null,
        "note" text not null default '',
        "custom_field_responses" jsonb not null default '[]',
        "checkout_token_hash" varchar(64) null,
        "key_count" integer not null default 0,
        "paid_at" timestamptz null,
        "completed_at" timestamptz null,
        "delivered_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "version" integer not null default 1,
        constraint "order_number_unique" unique ("number")
      );`);
    this.addSql(`alter sequence "order_number_seq" owned by "order"."number";`);
    // Keyset paging of a store's orders, newest first, with and without a status filter.
    this.addSql(`create index "order_store_created_index" on "order" ("store_id", "created_at" desc, "id" desc);`);
    this.addSql(
      `create index "order_store_status_created_index" on "order" ("store_id", "status", "created_at" desc, "id" desc);`,
    );
    // A buyer's orders in a store (customer area).
    this.addSql(
      `create index "order_store_email_created_index" on "order" ("store_id", "customer_email", "created_at" desc, "id" desc);`,
    );
    this.addSql(`
      create table "order_line" (
        "id" varchar(32) primary key,
        "order_id" varchar(32) not null references "order" ("id") on delete cascade,
        "product_id" varchar(32) null,
        "product_name" varchar(200) not null,
        "quantity" integer not null check ("quantity" > 0),
        "unit_price_minor" bigint not null check ("unit_price_minor" >= 0)
      );`);
    this.addSql(`create index "order_line_order_id_index" on "order_line" ("order_id");`);

    this.addSql(`
      create table "customer" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id") on delete cascade,
        "email" varchar(320) not null,
        "created_at" timestamptz not null,
        "last_login_at" timestamptz null,
        constraint "customer_store_id_email_unique" unique ("store_id", "email")
      );`);
    this.addSql(`
      create table "customer_code" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id") on delete cascade,
        "email" varchar(320) not null,
        "code_hash" varchar(64) not null,
        "attempts" integer not null default 0,
        "created_at" timestamptz not null,
        "expires_at" timestamptz not null,
        "used_at" timestamptz null
      );`);
    this.addSql(`create index "customer_code_store_id_email_index" on "customer_code" ("store_id", "email");`);
    this.addSql(`
      create table "customer_session" (
        "id_hash" varchar(64) primary key,
        "customer_id" varchar(32) not null references "customer" ("id") on delete cascade,
        "created_at" timestamptz not null,
        "expires_at" timestamptz not null
      );`);
    this.addSql(`create index "customer_session_customer_id_index" on "customer_session" ("customer_id");`);
    // Customer-route CORS looks stores up by an allowed origin.
    this.addSql(`create index "store_allowed_origins_index" on "store" using gin ("allowed_origins");`);
    this.addSql(`
      create table "outbound_email" (
        "id" varchar(32) primary key,
        "to" varchar(320) not null,
        "subject" varchar(300) not null,
        "text" text not null,
        "created_at" timestamptz not null
      );`);
  }

  override down(): void {
    for (const table of [
      'outbound_email',
      'customer_session',
      'customer_code',
      'customer',
      'order_line',
      'order',
      'api_key',
      'password_reset',
      'session',
    ]) {
      this.addSql(`drop table if exists "${table}";`);
    }
    this.addSql(`drop index if exists "store_allowed_origins_index";`);
    this.addSql(`drop sequence if exists "order_number_seq";`);
  }
}
