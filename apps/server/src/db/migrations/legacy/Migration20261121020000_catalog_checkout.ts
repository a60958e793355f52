import { Migration } from '@mikro-orm/migrations';

/** Products, license keys, files, the event outbox, coupons, blacklists, feedback, tracking; order discounts. */
export class Migration20261121020000_catalog_checkout extends Migration {
  override up(): void {
    this.addSql(`
      create table "product" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "name" varchar(200) not null,
        "description" text not null default '',
        "price_minor" bigint not null check ("price_minor" >= 0),
        "status" text not null check ("status" in ('active', 'draft', 'archived')),
        "delivery_methods" text[] not null,
        "delivery_instructions" text not null default '',
        "custom_fields" jsonb not null default '[]',
        "min_quantity" integer not null default 1 check ("min_quantity" >= 1),
        "max_quantity" integer null check ("max_quantity" is null or "max_quantity" >= "min_quantity"),
        "deleted_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "version" integer not null default 1
      );`);
    this.addSql(
      `create index "product_store_status_index" on "product" ("store_id", "status", "created_at") where "deleted_at" is null;`,
    );

    this.addSql(`
      create table "license_key" (
        "id" varchar(32) primary key,
        "product_id" varchar(32) not null references "product" ("id"),
        "value_enc" text not null,
        "value_hash" varchar(64) not null,
        "status" text not null default 'available' check ("status" in ('available', 'assigned', 'revoked')),
        "order_id" varchar(32) null references "order" ("id"),
        "order_line_id" varchar(32) null,
        "assigned_at" timestamptz null,
        "created_at" timestamptz not null,
        constraint "license_key_product_value_unique" unique ("product_id", "value_hash"),
        constraint "license_key_assignment_check" check (("status" = 'available') = ("order_id" is null) or "status" = 'revoked')
      );`);
    // Claims take the oldest available keys of a product: a small partial index.
    this.addSql(
      `create index "license_key_available_index" on "license_key" ("product_id", "id") where "status" = 'available';`,
    );
    this.addSql(`create index "license_key_order_index" on "license_key" ("order_id") where "order_id" is not null;`);

    this.addSql(`
      create table "file" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "product_id" varchar(32) null references "product" ("id"),
        "name" varchar(255) not null,
        "content_type" varchar(100) not null,
        "size" bigint not null,
        "sha256" varchar(64) not null,
        "storage_key" varchar(200) not null,
        "created_at" timestamptz not null
      );`);
    this.addSql(`create index "file_product_index" on "file" ("product_id");`);

    this.addSql(`
      create table "event" (
        "id" varchar(40) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "type" varchar(50) not null,
        "payload" jsonb not null,
        "created_at" timestamptz not null
      );`);
    this.addSql(`create index "event_store_created_index" on "event" ("store_id", "created_at");`);

    this.addSql(`
      create table "coupon" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "code" varchar(64) not null,
        "discount_type" text not null check ("discount_type" in ('percent', 'fixed')),
        "discount_value" bigint not null check ("discount_value" > 0),
        "product_ids" text[] not null default '{}',
        "max_uses" integer null check ("max_uses" is null or "max_uses" > 0),
        "uses" integer not null default 0,
        "min_amount_minor" bigint null,
        "expires_at" timestamptz null,
        "active" boolean not null default true,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "coupon_percent_check" check ("discount_type" <> 'percent' or "discount_value" <= 100),
        constraint "coupon_uses_check" check ("max_uses" is null or "uses" <= "max_uses")
      );`);
    this.addSql(`create unique index "coupon_store_code_unique" on "coupon" ("store_id", lower("code"));`);

    this.addSql(`
      create table "blacklist_entry" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "kind" text not null check ("kind" in ('email', 'ip', 'country')),
        "value" varchar(320) not null,
        "note" varchar(200) not null default '',
        "created_at" timestamptz not null,
        constraint "blacklist_entry_store_id_kind_value_unique" unique ("store_id", "kind", "value")
      );`);

    this.addSql(`
      create table "feedback" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "order_id" varchar(32) not null references "order" ("id"),
        "rating" smallint not null check ("rating" between 1 and 5),
        "text" varchar(2000) not null,
        "created_at" timestamptz not null,
        constraint "feedback_order_id_unique" unique ("order_id")
      );`);
    this.addSql(
      `create index "feedback_store_created_index" on "feedback" ("store_id", "created_at" desc, "id" desc);`,
    );

    this.addSql(`
      create table "track_event" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "type" varchar(40) not null,
        "product_id" varchar(32) null,
        "path" varchar(500) null,
        "created_at" timestamptz not null
      );`);
    this.addSql(`create index "track_event_store_created_index" on "track_event" ("store_id", "created_at");`);

    this.addSql(
      `alter table "order" add column "subtotal_minor" bigint not null default 0, add column "discount_minor" bigint not null default 0, add column "coupon_id" varchar(32) null;`,
    );
    // Lines keep the order the buyer put them in.
    this.addSql(`alter table "order_line" add column "position" integer not null default 0;`);
    // The expiry job finds stale pending orders without scanning paid ones.
    this.addSql(`create index "order_pending_created_index" on "order" ("created_at") where "status" = 'pending';`);
  }

  override down(): void {
    this.addSql(`drop index if exists "order_pending_created_index";`);
    this.addSql(
      `alter table "order" drop column "subtotal_minor", drop column "discount_minor", drop column "coupon_id";`,
    );
    this.addSql(`alter table "order_line" drop column "position";`);
    for (const table of [
      'track_event',
      'feedback',
      'blacklist_entry',
      'coupon',
      'event',
      'file',
      'license_key',
      'product',
    ]) {
      this.addSql(`drop table if exists "${table}";`);
    }
  }
}
