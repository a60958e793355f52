import { Migration } from '@mikro-orm/migrations';

/** Base tables: users, stores, store members. */
export class Migration20261121000000_base extends Migration {
  override up(): void {
    this.addSql(`
      create table "user" (
        "id" varchar(32) primary key,
        "email" varchar(320) not null,
        "password_hash" text null,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "user_email_unique" unique ("email"),
        constraint "user_email_lower" check ("email" = lower("email"))
      );`);
    this.addSql(`
      create table "store" (
        "id" varchar(32) primary key,
        "name" varchar(100) not null,
        "subdomain" varchar(63) not null,
        "currency" varchar(3) not null,
        "banned" boolean not null default false,
        "allowed_origins" text[] not null default '{}',
        "settings" jsonb not null default '{}',
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "store_subdomain_unique" unique ("subdomain"),
        constraint "store_subdomain_lower" check ("subdomain" = lower("subdomain"))
      );`);
    this.addSql(`
      create table "store_member" (
        "id" varchar(32) primary key,
        "store_id" varchar(32) not null references "store" ("id") on delete cascade,
        "user_id" varchar(32) not null references "user" ("id") on delete cascade,
        "role" text not null check ("role" in ('owner', 'staff')),
        "permissions" text[] not null default '{}',
        "created_at" timestamptz not null,
        constraint "store_member_store_id_user_id_unique" unique ("store_id", "user_id")
      );`);
    this.addSql(`create index "store_member_user_id_index" on "store_member" ("user_id");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "store_member";`);
    this.addSql(`drop table if exists "store";`);
    this.addSql(`drop table if exists "user";`);
  }
}
