import { Migration } from '@mikro-orm/migrations';

export class Migration20261128124812_staff_two_factor_account_name extends Migration {
  override up(): void {
    this.addSql(`alter table "store" add column "require_two_factor" boolean not null default false;`);

    this.addSql(`alter table "user" add column "name" varchar(100) null;`);
  }

  override down(): void {
    this.addSql(`alter table "store" drop column "require_two_factor";`);

    this.addSql(`alter table "user" drop column "name";`);
  }
}
