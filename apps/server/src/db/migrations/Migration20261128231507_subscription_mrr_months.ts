import { Migration } from '@mikro-orm/migrations';

export class Migration20261128231507_subscription_mrr_months extends Migration {
  override up(): void {
    this.addSql(
      `create table "subscription_mrr_month" ("store_id" varchar(32) not null, "currency" varchar(3) not null, "month" date not null, "mrr_scaled" numeric not null, constraint "subscription_mrr_month_pkey" primary key ("store_id", "currency", "month"));`,
    );

    this.addSql(
      `alter table "subscription_mrr_month" add constraint "subscription_mrr_month_store_id_fkey" foreign key ("store_id") references "store" ("id") on update no action;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "subscription_mrr_month" cascade;`);
  }
}
