import { Migration } from '@mikro-orm/migrations';

export class Migration20261128161808_licenses_follow_subscriptions extends Migration {
  override up(): void {
    this.addSql(`alter table "store" add column "subscription_grace_days" int not null default 7;`);
    this.addSql(
      `alter table "store" add constraint store_subscription_grace_days_check check(subscription_grace_days >= 0 and subscription_grace_days <= 30);`,
    );

    this.addSql(`alter table "license_key" add column "subscription_id" varchar(32) null;`);
    this.addSql(
      `create index "license_key_subscription_index" on "license_key" ("subscription_id") where "subscription_id" is not null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "license_key_subscription_index";`);
    this.addSql(`alter table "license_key" drop column "subscription_id";`);

    this.addSql(`alter table "store" drop constraint store_subscription_grace_days_check;`);
    this.addSql(`alter table "store" drop column "subscription_grace_days";`);
  }
}
