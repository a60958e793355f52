import { Migration } from '@mikro-orm/migrations';

export class Migration20261128125643_product_plans extends Migration {
  override up(): void {
    this.addSql(
      `create table "product_plan" ("id" varchar(32) not null, "product_id" varchar(32) not null, "livemode" boolean not null default true, "position" int not null, "interval" text check ("interval" in ('day', 'week', 'month', 'year')) not null, "interval_count" int not null default 1, "price_minor" bigint not null, "trial_days" int not null default 0, "active" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "product_plan_pkey" primary key ("id"), constraint product_plan_price_minor_check check (price_minor >= 0), constraint product_plan_interval_count_check check (interval_count >= 1 and interval_count <= 12), constraint product_plan_year_check check (interval <> 'year' or interval_count = 1), constraint product_plan_trial_days_check check (trial_days >= 0 and trial_days <= 365));`,
    );
    this.addSql(`create index "product_plan_product_position_index" on "product_plan" ("product_id", "position");`);

    this.addSql(
      `alter table "product_plan" add constraint "product_plan_product_id_fkey" foreign key ("product_id") references "product" ("id") on update no action;`,
    );

    this.addSql(`alter table "product" add column "recurring" boolean not null default false;`);

    this.addSql(
      `alter table "order" add column "subscription_id" varchar(32) null, add column "billing_reason" text check ("billing_reason" in ('purchase', 'subscription_create', 'subscription_cycle', 'subscription_update')) not null default 'purchase';`,
    );

    this.addSql(
      `alter table "order_line" add column "plan_id" varchar(32) null, add column "plan_interval" text check ("plan_interval" in ('day', 'week', 'month', 'year')) null, add column "plan_interval_count" int null, add column "plan_trial_days" int null;`,
    );

    this.addSql(
      `alter table "coupon" add column "duration" text check ("duration" in ('once', 'forever')) not null default 'once';`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "product_plan" cascade;`);

    this.addSql(`alter table "coupon" drop column "duration";`);

    this.addSql(`alter table "order" drop column "subscription_id", drop column "billing_reason";`);

    this.addSql(
      `alter table "order_line" drop column "plan_id", drop column "plan_interval", drop column "plan_interval_count", drop column "plan_trial_days";`,
    );

    this.addSql(`alter table "product" drop column "recurring";`);
  }
}
