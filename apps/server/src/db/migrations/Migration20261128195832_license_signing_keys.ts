import { Migration } from '@mikro-orm/migrations';

export class Migration20261128195832_license_signing_keys extends Migration {
  override up(): void {
    this.addSql(
      `create table "license_signing_key" ("id" varchar(32) not null, "store_id" varchar(32) not null, "livemode" boolean not null, "public_key" varchar(64) not null, "private_key_sealed" text not null, "created_at" timestamptz not null, "retired_at" timestamptz null, "published_until" timestamptz null, constraint "license_signing_key_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create unique index "license_signing_key_current_unique" on "license_signing_key" ("store_id", "livemode") where "retired_at" is null;`,
    );
    this.addSql(`create index "license_signing_key_store_index" on "license_signing_key" ("store_id", "created_at");`);

    this.addSql(
      `alter table "license_signing_key" add constraint "license_signing_key_store_id_fkey" foreign key ("store_id") references "store" ("id") on update no action;`,
    );

    this.addSql(`alter table "store" add column "license_lease_days" int not null default 7;`);
    this.addSql(
      `alter table "store" add constraint store_license_lease_days_check check(license_lease_days >= 1 and license_lease_days <= 90);`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "license_signing_key" cascade;`);

    this.addSql(`alter table "store" drop constraint store_license_lease_days_check;`);
    this.addSql(`alter table "store" drop column "license_lease_days";`);
  }
}
