import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110306_email_change extends Migration {
  override up(): void {
    this.addSql(
      `create table "email_change" ("token_hash" varchar(64) not null, "user_id" varchar(32) not null, "new_email" varchar(320) not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "email_change_pkey" primary key ("token_hash"));`,
    );
    this.addSql(`create index "email_change_user_id_index" on "email_change" ("user_id");`);

    this.addSql(
      `alter table "email_change" add constraint "email_change_user_id_fkey" foreign key ("user_id") references "user" ("id") on update no action on delete cascade;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "email_change" cascade;`);
  }
}
