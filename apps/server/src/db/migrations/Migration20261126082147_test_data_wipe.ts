import { Migration } from '@mikro-orm/migrations';

export class Migration20261126082147_test_data_wipe extends Migration {
  override up(): void {
    this.addSql(
      `create table "test_data_wipe" ("id" varchar(32) not null, "store_id" varchar(32) not null, "status" text check ("status" in ('queued', 'running', 'succeeded', 'failed')) not null default 'queued', "requested_by" varchar(64) not null, "deleted" jsonb not null default '{}', "error" varchar(500) null, "locked_until" timestamptz null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, constraint "test_data_wipe_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create unique index "test_data_wipe_store_active_unique" on "test_data_wipe" ("store_id") where "status" in ('queued', 'running');`,
    );
    this.addSql(
      `create index "test_data_wipe_active_index" on "test_data_wipe" ("created_at") where "status" in ('queued', 'running');`,
    );

    this.addSql(
      `alter table "test_data_wipe" add constraint "test_data_wipe_store_id_fkey" foreign key ("store_id") references "store" ("id") on update no action on delete cascade;`,
    );

    this.addSql(`create index "file_store_mode_index" on "file" ("store_id", "livemode");`);
  }

  override down(): void {
    this.addSql(`drop table if exists "test_data_wipe" cascade;`);

    this.addSql(`drop index "file_store_mode_index";`);
  }
}
