import { Migration } from '@mikro-orm/migrations';

export class Migration20261128193233_subscription_figures extends Migration {
  override up(): void {
    this.addSql(
      `create index "subscription_store_mrr_index" on "subscription" ("store_id", "livemode") include ("currency", "interval", "interval_count", "unit_price_minor", "quantity") where "status" in ('active', 'past_due');`,
    );
    this.addSql(
      `create index "subscription_store_ended_index" on "subscription" ("store_id", "livemode", "ended_at") where "ended_at" is not null;`,
    );
    this.addSql(
      `create index "subscription_store_history_index" on "subscription" ("store_id", "livemode", "currency") include ("status", "interval", "interval_count", "unit_price_minor", "quantity", "created_at", "trial_end", "ended_at", "paused_at") where "status" not in ('incomplete', 'incomplete_expired');`,
    );
    this.addSql(
      `create index "subscription_product_plan_live_index" on "subscription" ("product_id", "livemode", "plan_id") include ("status") where "status" in ('trialing', 'active', 'past_due');`,
    );
  }

  override down(): void {
    this.addSql(`drop index "subscription_store_mrr_index";`);
    this.addSql(`drop index "subscription_store_ended_index";`);
    this.addSql(`drop index "subscription_store_history_index";`);
    this.addSql(`drop index "subscription_product_plan_live_index";`);
  }
}
