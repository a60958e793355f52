import { Migration } from '@mikro-orm/migrations';

export class Migration20261126054100_test_mode extends Migration {
  override up(): void {
    this.addSql(`drop index "product_store_status_index";`);
    this.addSql(`alter table "product" drop constraint "product_store_slug_unique";`);

    this.addSql(`alter table "product" add column "livemode" boolean not null default true;`);
    this.addSql(
      `create index "product_store_mode_status_index" on "product" ("store_id", "livemode", "status", "created_at") where "deleted_at" is null;`,
    );
    this.addSql(
      `alter table "product" add constraint "product_store_slug_unique" unique ("store_id", "livemode", "slug");`,
    );

    this.addSql(`drop index "order_store_created_index";`);
    this.addSql(`drop index "order_store_email_created_index";`);
    this.addSql(`drop index "order_store_paid_created_index";`);
    this.addSql(`drop index "order_store_status_created_index";`);

    this.addSql(`alter table "order" add column "livemode" boolean not null default true;`);
    this.addSql(
      `create index "order_store_mode_created_index" on "order" ("store_id", "livemode", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "order_store_mode_status_created_index" on "order" ("store_id", "livemode", "status", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "order_store_mode_paid_created_index" on "order" ("store_id", "livemode", "created_at") include ("price_minor", "currency") where "status" in ('paid', 'processing', 'completed');`,
    );
    this.addSql(
      `create index "order_store_mode_email_created_index" on "order" ("store_id", "livemode", "customer_email", "created_at" desc, "id" desc);`,
    );

    this.addSql(`alter table "order_line" add column "livemode" boolean not null default true;`);

    this.addSql(`alter table "license_key" add column "livemode" boolean not null default true;`);

    this.addSql(`alter table "license_instance" add column "livemode" boolean not null default true;`);

    this.addSql(`drop index "event_store_created_index";`);

    this.addSql(`alter table "event" add column "livemode" boolean not null default true;`);
    this.addSql(`create index "event_store_created_index" on "event" ("store_id", "livemode", "created_at");`);

    this.addSql(`drop index "customer_store_created_index";`);
    this.addSql(`drop index "customer_store_email_prefix_index";`);
    this.addSql(`alter table "customer" drop constraint "customer_store_id_email_unique";`);

    this.addSql(`alter table "customer" add column "livemode" boolean not null default true;`);
    this.addSql(
      `create index "customer_store_mode_created_index" on "customer" ("store_id", "livemode", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "customer_store_mode_email_prefix_index" on "customer" ("store_id", "livemode", "email" varchar_pattern_ops);`,
    );
    this.addSql(
      `alter table "customer" add constraint "customer_store_id_livemode_email_unique" unique ("store_id", "livemode", "email");`,
    );

    this.addSql(`drop index "coupon_store_code_unique";`);

    this.addSql(`alter table "coupon" add column "livemode" boolean not null default true;`);
    this.addSql(
      `create unique index "coupon_store_mode_code_unique" on "coupon" ("store_id", "livemode", lower("code"));`,
    );

    this.addSql(`alter table "blacklist_entry" drop constraint "blacklist_entry_store_id_kind_value_unique";`);

    this.addSql(`alter table "blacklist_entry" add column "livemode" boolean not null default true;`);
    this.addSql(
      `alter table "blacklist_entry" add constraint "blacklist_entry_store_id_livemode_kind_value_unique" unique ("store_id", "livemode", "kind", "value");`,
    );

    this.addSql(`alter table "file" add column "livemode" boolean not null default true;`);

    this.addSql(`drop index "ticket_store_updated_index";`);

    this.addSql(`alter table "ticket" add column "livemode" boolean not null default true;`);
    this.addSql(
      `create index "ticket_store_mode_updated_index" on "ticket" ("store_id", "livemode", "updated_at" desc, "id" desc);`,
    );

    this.addSql(`alter table "ticket_message" add column "livemode" boolean not null default true;`);

    this.addSql(
      `alter table "api_key" add column "mode" text check ("mode" in ('live', 'test')) not null default 'live';`,
    );

    this.addSql(`drop index "webhook_store_index";`);

    this.addSql(`alter table "webhook" add column "livemode" boolean not null default true;`);
    this.addSql(`create index "webhook_store_index" on "webhook" ("store_id", "livemode", "created_at");`);

    this.addSql(`alter table "webhook_delivery" add column "livemode" boolean not null default true;`);
  }

  override down(): void {
    this.addSql(`alter table "api_key" drop column "mode";`);

    this.addSql(`alter table "blacklist_entry" drop constraint "blacklist_entry_store_id_livemode_kind_value_unique";`);
    this.addSql(`alter table "blacklist_entry" drop column "livemode";`);

    this.addSql(
      `alter table "blacklist_entry" add constraint "blacklist_entry_store_id_kind_value_unique" unique ("store_id", "kind", "value");`,
    );

    this.addSql(`drop index "coupon_store_mode_code_unique";`);
    this.addSql(`alter table "coupon" drop column "livemode";`);

    this.addSql(
      `CREATE UNIQUE INDEX coupon_store_code_unique ON public.coupon USING btree (store_id, lower((code)::text));`,
    );

    this.addSql(`drop index "customer_store_mode_created_index";`);
    this.addSql(`drop index "customer_store_mode_email_prefix_index";`);
    this.addSql(`alter table "customer" drop constraint "customer_store_id_livemode_email_unique";`);
    this.addSql(`alter table "customer" drop column "livemode";`);

    this.addSql(`create index "customer_store_created_index" on "customer" ("store_id", "created_at", "id");`);
    this.addSql(`create index "customer_store_email_prefix_index" on "customer" ("store_id", "email");`);
    this.addSql(`alter table "customer" add constraint "customer_store_id_email_unique" unique ("store_id", "email");`);

    this.addSql(`drop index "event_store_created_index";`);
    this.addSql(`alter table "event" drop column "livemode";`);

    this.addSql(`create index "event_store_created_index" on "event" ("store_id", "created_at");`);

    this.addSql(`alter table "file" drop column "livemode";`);

    this.addSql(`alter table "license_instance" drop column "livemode";`);

    this.addSql(`alter table "license_key" drop column "livemode";`);

    this.addSql(`drop index "order_store_mode_created_index";`);
    this.addSql(`drop index "order_store_mode_status_created_index";`);
    this.addSql(`drop index "order_store_mode_paid_created_index";`);
    this.addSql(`drop index "order_store_mode_email_created_index";`);
    this.addSql(`alter table "order" drop column "livemode";`);

    this.addSql(`create index "order_store_created_index" on "order" ("store_id", "created_at", "id");`);
    this.addSql(
      `create index "order_store_email_created_index" on "order" ("store_id", "customer_email", "created_at", "id");`,
    );
    this.addSql(
      `CREATE INDEX order_store_paid_created_index ON public."order" USING btree (store_id, created_at) INCLUDE (price_minor, currency) WHERE (status = ANY (ARRAY['paid'::text, 'processing'::text, 'completed'::text]));`,
    );
    this.addSql(
      `create index "order_store_status_created_index" on "order" ("store_id", "status", "created_at", "id");`,
    );

    this.addSql(`alter table "order_line" drop column "livemode";`);

    this.addSql(`drop index "product_store_mode_status_index";`);
    this.addSql(`alter table "product" drop constraint "product_store_slug_unique";`);
    this.addSql(`alter table "product" drop column "livemode";`);

    this.addSql(
      `CREATE INDEX product_store_status_index ON public.product USING btree (store_id, status, created_at) WHERE (deleted_at IS NULL);`,
    );
    this.addSql(`alter table "product" add constraint "product_store_slug_unique" unique ("store_id", "slug");`);

    this.addSql(`drop index "ticket_store_mode_updated_index";`);
    this.addSql(`alter table "ticket" drop column "livemode";`);

    this.addSql(`create index "ticket_store_updated_index" on "ticket" ("store_id", "updated_at", "id");`);

    this.addSql(`alter table "ticket_message" drop column "livemode";`);

    this.addSql(`drop index "webhook_store_index";`);
    this.addSql(`alter table "webhook" drop column "livemode";`);

    this.addSql(`create index "webhook_store_index" on "webhook" ("store_id", "created_at");`);

    this.addSql(`alter table "webhook_delivery" drop column "livemode";`);
  }
}
