import { Migration } from '@mikro-orm/migrations';

export class Migration20261128111500_customers_by_email extends Migration {
  override up(): void {
    this.addSql(`drop index "customer_store_mode_created_index";`);
    this.addSql(`drop index "customer_store_mode_email_prefix_index";`);
    this.addSql(
      `create index "customer_store_mode_email_c_index" on "customer" ("store_id", "livemode", "email" collate "C");`,
    );
    this.addSql(
      `create index "order_store_mode_buyer_index" on "order" ("store_id", "livemode", "customer_email" collate "C") where "status" in ('paid', 'processing', 'completed', 'refunded');`,
    );
  }

  override down(): void {
    this.addSql(`drop index "order_store_mode_buyer_index";`);
    this.addSql(`drop index "customer_store_mode_email_c_index";`);
    this.addSql(
      `create index "customer_store_mode_created_index" on "customer" ("store_id", "livemode", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "customer_store_mode_email_prefix_index" on "customer" ("store_id", "livemode", "email" varchar_pattern_ops);`,
    );
  }
}
