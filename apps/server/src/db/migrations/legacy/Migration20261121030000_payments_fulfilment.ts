import { Migration } from '@mikro-orm/migrations';

/** Payments and their inbound notifications, manual delivery and payment flags on orders, support tickets. */
export class Migration20261121030000_payments_fulfilment extends Migration {
  override up(): void {
    this.addSql(`
      create table "payment" (
        "id" varchar(32) primary key,
        "order_id" varchar(32) not null references "order" ("id"),
        "gateway" varchar(20) not null,
        "provider_ref" varchar(200) null,
        "amount_minor" bigint not null,
        "currency" varchar(3) not null,
        "status" text not null check ("status" in ('started', 'paid', 'refunded', 'failed', 'rejected')),
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null
      );`);
    this.addSql(`create index "payment_order_index" on "payment" ("order_id");`);
    this.addSql(
      `create unique index "payment_gateway_ref_unique" on "payment" ("gateway", "provider_ref") where "provider_ref" is not null;`,
    );
    // Inbound notifications are idempotent on (gateway, provider event id).
    this.addSql(`
      create table "payment_notification" (
        "gateway" varchar(20) not null,
        "event_id" varchar(200) not null,
        "order_id" varchar(32) null,
        "kind" varchar(20) not null,
        "outcome" varchar(40) not null,
        "received_at" timestamptz not null,
        primary key ("gateway", "event_id")
      );`);
    this.addSql(`alter table "order"
      add column "payment_flag" varchar(40) null,
      add column "manual_delivery_content" text not null default '',
      add column "payment_proof_file_id" varchar(32) null,
      add column "refunded_at" timestamptz null;`);
    // try-assign and restocks look for orders still waiting for keys, oldest first.
    this.addSql(`create index "order_processing_paid_index" on "order" ("paid_at") where "status" = 'processing';`);
    this.addSql(`create index "order_line_product_index" on "order_line" ("product_id");`);
    this.addSql(
      `create index "license_key_order_line_index" on "license_key" ("order_line_id") where "order_line_id" is not null;`,
    );

    this.addSql(`
      create table "ticket" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "order_id" varchar(32) not null references "order" ("id"),
        "subject" varchar(200) not null,
        "status" text not null default 'open' check ("status" in ('open', 'answered', 'closed')),
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null
      );`);
    this.addSql(`create index "ticket_store_updated_index" on "ticket" ("store_id", "updated_at" desc, "id" desc);`);
    this.addSql(`create index "ticket_order_index" on "ticket" ("order_id");`);
    this.addSql(`
      create table "ticket_message" (
        "id" varchar(32) primary key,
        "ticket_id" varchar(32) not null references "ticket" ("id") on delete cascade,
        "author" text not null check ("author" in ('buyer', 'staff')),
        "staff_user_id" varchar(32) null references "user" ("id"),
        "body" text not null,
        "created_at" timestamptz not null
      );`);
    this.addSql(`create index "ticket_message_ticket_index" on "ticket_message" ("ticket_id", "created_at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "ticket_message";`);
    this.addSql(`drop table if exists "ticket";`);
    this.addSql(`drop index if exists "license_key_order_line_index";`);
    this.addSql(`drop index if exists "order_line_product_index";`);
    this.addSql(`drop index if exists "order_processing_paid_index";`);
    this.addSql(
      `alter table "order" drop column "payment_flag", drop column "manual_delivery_content", drop column "payment_proof_file_id", drop column "refunded_at";`,
    );
    this.addSql(`drop table if exists "payment_notification";`);
    this.addSql(`drop table if exists "payment";`);
  }
}
