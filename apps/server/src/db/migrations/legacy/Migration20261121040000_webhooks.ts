import { Migration } from '@mikro-orm/migrations';

/** Outgoing webhooks: endpoints, the delivery log (one row per attempt), and fan-out state on events. */
export class Migration20261121040000_webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table "webhook" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id"),
        "name" varchar(100) not null,
        "url" varchar(2048) not null,
        "secret_enc" text not null,
        "secret_prefix" varchar(16) not null,
        "events" text[] not null,
        "enabled" boolean not null default true,
        "failure_count" integer not null default 0,
        "first_failure_at" timestamptz null,
        "disabled_at" timestamptz null,
        "last_delivered_at" timestamptz null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null
      );`);
    this.addSql(`create index "webhook_store_index" on "webhook" ("store_id", "created_at");`);
    this.addSql(`
      create table "webhook_delivery" (
        "id" varchar(32) primary key,
        "webhook_id" varchar(32) not null references "webhook" ("id") on delete cascade,
        "store_id" varchar(32) not null,
        "event_id" varchar(40) not null,
        "event" varchar(50) not null,
        "attempt" integer not null,
        "status" text not null check ("status" in ('pending', 'success', 'failed', 'queued', 'skipped')),
        "due_at" timestamptz not null,
        "locked_until" timestamptz null,
        "response_code" integer null,
        "response_body_preview" varchar(1024) null,
        "error_message" varchar(500) null,
        "duration_ms" integer null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "webhook_delivery_attempt_unique" unique ("webhook_id", "event_id", "attempt")
      );`);
    // Claims: what is due (queued) or was abandoned in flight (pending past its lease).
    this.addSql(
      `create index "webhook_delivery_due_index" on "webhook_delivery" ("due_at") where "status" in ('queued', 'pending');`,
    );
    this.addSql(
      `create index "webhook_delivery_log_index" on "webhook_delivery" ("webhook_id", "created_at" desc, "id" desc);`,
    );
    this.addSql(`create index "webhook_delivery_created_index" on "webhook_delivery" ("created_at");`);
    // Fan-out: events not yet turned into deliveries.
    this.addSql(`alter table "event" add column "dispatched_at" timestamptz null;`);
    this.addSql(`create index "event_undispatched_index" on "event" ("created_at") where "dispatched_at" is null;`);
  }

  override down(): void {
    this.addSql(`drop index if exists "event_undispatched_index";`);
    this.addSql(`alter table "event" drop column "dispatched_at";`);
    this.addSql(`drop table if exists "webhook_delivery";`);
    this.addSql(`drop table if exists "webhook";`);
  }
}
