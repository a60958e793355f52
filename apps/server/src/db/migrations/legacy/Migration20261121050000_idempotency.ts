import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency-Key claims of the order-creating routes: one row per (procedure, store as
 * given, SHA-256 of the key), claimed before the procedure runs and holding its answer
 * once it succeeded. Kept 24 h (the prune-idempotency-keys job).
 */
export class Migration20261121050000_idempotency extends Migration {
  override up(): void {
    this.addSql(`
      create table "idempotency_key" (
        "path" varchar(200) not null,
        "scope" text not null,
        "key_hash" char(64) not null,
        "body_hash" char(64) not null,
        "claim" varchar(64) not null,
        "status" integer null,
        "response" text null,
        "created_at" timestamptz not null,
        "claimed_at" timestamptz not null,
        "completed_at" timestamptz null,
        constraint "idempotency_key_pkey" primary key ("path", "scope", "key_hash")
      );`);
    this.addSql(`create index "idempotency_key_created_index" on "idempotency_key" ("created_at");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "idempotency_key";`);
  }
}
