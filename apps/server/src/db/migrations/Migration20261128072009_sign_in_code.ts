import { Migration } from '@mikro-orm/migrations';

export class Migration20261128072009_sign_in_code extends Migration {
  override up(): void {
    this.addSql(
      `create table "sign_in_code" ("id" varchar(32) not null, "user_id" varchar(32) not null, "code_hash" varchar(64) not null, "attempts" int not null default 0, "created_at" timestamptz not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "sign_in_code_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "sign_in_code_user_id_index" on "sign_in_code" ("user_id");`);

    this.addSql(
      `alter table "sign_in_code" add constraint "sign_in_code_user_id_fkey" foreign key ("user_id") references "user" ("id") on update no action on delete cascade;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "sign_in_code" cascade;`);
  }
}
