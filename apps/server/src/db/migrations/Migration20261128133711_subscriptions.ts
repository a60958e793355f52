import { Migration } from '@mikro-orm/migrations';

export class Migration20261128133711_subscriptions extends Migration {
  override up(): void {
    this.addSql(
      `create table "subscription" ("id" varchar(32) not null, "store_id" varchar(32) not null, "livemode" boolean not null default true, "product_id" varchar(32) null, "product_name" varchar(200) not null, "plan_id" varchar(32) not null, "interval" text check ("interval" in ('day', 'week', 'month', 'year')) not null, "interval_count" int not null, "unit_price_minor" bigint not null, "quantity" int not null, "discount_minor" bigint not null default 0, "coupon_id" varchar(32) null, "currency" varchar(3) not null, "status" text check ("status" in ('incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'paused', 'canceled')) not null, "customer_email" varchar(320) not null, "payment_method" varchar(50) not null, "first_order_id" varchar(32) not null, "latest_order_number" bigint null, "anchor" timestamptz not null, "current_period_start" timestamptz not null, "current_period_end" timestamptz not null, "trial_end" timestamptz null, "cancel_at_period_end" boolean not null default false, "pause_at_period_end" boolean not null default false, "canceled_at" timestamptz null, "ended_at" timestamptz null, "paused_at" timestamptz null, "resumes_at" timestamptz null, "past_due_at" timestamptz null, "retries" int not null default 0, "unpaid_from" timestamptz null, "next_retry_at" timestamptz null, "cancellation_reason" text check ("cancellation_reason" in ('requested_by_customer', 'requested_by_merchant', 'payment_failed')) null, "credit_minor" bigint not null default 0, "pending_terms" jsonb null, "notice_for" timestamptz null, "clock_time" timestamptz null, "due_at" timestamptz null, "lease_until" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "version" int not null default 1, constraint "subscription_pkey" primary key ("id"), constraint subscription_quantity_check check (quantity > 0), constraint subscription_interval_count_check check (interval_count > 0), constraint subscription_unit_price_minor_check check (unit_price_minor >= 0), constraint subscription_credit_minor_check check (credit_minor >= 0));`,
    );
    this.addSql(
      `create index "subscription_store_mode_created_index" on "subscription" ("store_id", "livemode", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "subscription_store_mode_status_created_index" on "subscription" ("store_id", "livemode", "status", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "subscription_store_mode_email_created_index" on "subscription" ("store_id", "livemode", "customer_email", "created_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "subscription_due_index" on "subscription" ("due_at") where "due_at" is not null and "livemode";`,
    );

    this.addSql(
      `alter table "subscription" add constraint "subscription_store_id_fkey" foreign key ("store_id") references "store" ("id") on update no action;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "subscription" cascade;`);
  }
}
