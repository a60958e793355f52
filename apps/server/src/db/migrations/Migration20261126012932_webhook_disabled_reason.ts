import { Migration } from '@mikro-orm/migrations';

export class Migration20261126012932_webhook_disabled_reason extends Migration {
  override up(): void {
    this.addSql(`alter table "webhook" add column "disabled_reason" varchar(500) null;`);
  }

  override down(): void {
    this.addSql(`alter table "webhook" drop column "disabled_reason";`);
  }
}
