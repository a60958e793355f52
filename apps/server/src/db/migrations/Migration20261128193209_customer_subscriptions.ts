import { Migration } from '@mikro-orm/migrations';

export class Migration20261128193209_customer_subscriptions extends Migration {
  override up(): void {
    this.addSql(`alter table "saved_payment_method" add column "subscription_id" varchar(32) null;`);
    this.addSql(
      `alter table "saved_payment_method" alter column "order_id" type varchar(32) using ("order_id"::varchar(32));`,
    );
    this.addSql(`alter table "saved_payment_method" alter column "order_id" drop not null;`);
    this.addSql(
      `create index "saved_payment_method_subscription_index" on "saved_payment_method" ("subscription_id", "created_at" desc) where "subscription_id" is not null;`,
    );

    this.addSql(`alter table "subscription" add column "cancellation_comment" varchar(500) null;`);
  }

  override down(): void {
    this.addSql(`drop index "saved_payment_method_subscription_index";`);
    this.addSql(`alter table "saved_payment_method" drop column "subscription_id";`);

    this.addSql(
      `alter table "saved_payment_method" alter column "order_id" type varchar(32) using ("order_id"::varchar(32));`,
    );
    this.addSql(`alter table "saved_payment_method" alter column "order_id" set not null;`);

    this.addSql(`alter table "subscription" drop column "cancellation_comment";`);
  }
}
