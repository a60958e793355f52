import { Migration } from '@mikro-orm/migrations';

export class Migration20261128163021_renewal_orders extends Migration {
  override up(): void {
    this.addSql(`alter table "order" add column "period_start" timestamptz null;`);
    this.addSql(
      `create unique index "order_subscription_period_unique" on "order" ("subscription_id", "period_start", "billing_reason") where "period_start" is not null;`,
    );
    this.addSql(
      `create index "order_subscription_number_index" on "order" ("subscription_id", "number") where "subscription_id" is not null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "order_subscription_period_unique";`);
    this.addSql(`drop index "order_subscription_number_index";`);
    this.addSql(`alter table "order" drop column "period_start";`);
  }
}
