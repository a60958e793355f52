import { Migration } from '@mikro-orm/migrations';

export class Migration20261128104426_two_factor extends Migration {
  override up(): void {
    this.addSql(
      `create table "recovery_code" ("id" varchar(32) not null, "user_id" varchar(32) not null, "code_hash" varchar(64) not null, "created_at" timestamptz not null, "used_at" timestamptz null, constraint "recovery_code_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "recovery_code_user_id_index" on "recovery_code" ("user_id");`);

    this.addSql(
      `alter table "recovery_code" add constraint "recovery_code_user_id_fkey" foreign key ("user_id") references "user" ("id") on update no action on delete cascade;`,
    );

    this.addSql(
      `alter table "user" add column "totp_secret_enc" text null, add column "totp_enabled_at" timestamptz null, add column "totp_last_step" int null;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "recovery_code" cascade;`);

    this.addSql(
      `alter table "user" drop column "totp_secret_enc", drop column "totp_enabled_at", drop column "totp_last_step";`,
    );
  }
}
