import { Migration } from '@mikro-orm/migrations';

export class Migration20261126011900_dashboard_data extends Migration {
  override up(): void {
    this.addSql(
      `alter table "order" add column "cancelled_at" timestamptz null, add column "expired_at" timestamptz null;`,
    );
    // Orders cancelled or expired before these were kept: their last change is that transition
    // (a later note edit aside), the best instant there is for the order's timeline.
    this.addSql(`update "order" set "cancelled_at" = "updated_at" where "status" = 'cancelled';`);
    this.addSql(`update "order" set "expired_at" = "updated_at" where "status" = 'expired';`);
    this.addSql(
      `create index "order_store_paid_created_index" on "order" ("store_id", "created_at") include ("price_minor", "currency") where "status" in ('paid', 'processing', 'completed');`,
    );

    this.addSql(
      `create index "customer_store_created_index" on "customer" ("store_id", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "customer_store_email_prefix_index" on "customer" ("store_id", "email" varchar_pattern_ops);`,
    );
  }

  override down(): void {
    this.addSql(`drop index "customer_store_created_index";`);
    this.addSql(`drop index "customer_store_email_prefix_index";`);

    this.addSql(`drop index "order_store_paid_created_index";`);
    this.addSql(`alter table "order" drop column "cancelled_at", drop column "expired_at";`);
  }
}
