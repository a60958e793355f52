import { Migration } from '@mikro-orm/migrations';

export class Migration20261128125552_saved_payment_methods extends Migration {
  override up(): void {
    this.addSql(
      `create table "saved_payment_method" ("id" varchar(32) not null, "store_id" varchar(32) not null, "livemode" boolean not null, "order_id" varchar(32) not null, "gateway" text check ("gateway" in ('test', 'stripe')) not null, "customer_ref" varchar(200) null, "method_ref" varchar(200) not null, "created_at" timestamptz not null, constraint "saved_payment_method_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "saved_payment_method" add constraint "saved_payment_method_order_id_unique" unique ("order_id");`,
    );
    this.addSql(
      `create index "saved_payment_method_store_mode_index" on "saved_payment_method" ("store_id", "livemode");`,
    );

    this.addSql(
      `create table "test_gateway_charge" ("id" varchar(32) not null, "idempotency_key" varchar(200) not null, "method_id" varchar(32) not null, "livemode" boolean not null, "amount_minor" bigint not null, "currency" varchar(3) not null, "status" text check ("status" in ('succeeded', 'failed', 'requires_action')) not null, "decline_code" varchar(60) null, "created_at" timestamptz not null, constraint "test_gateway_charge_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "test_gateway_charge" add constraint "test_gateway_charge_idempotency_key_unique" unique ("idempotency_key");`,
    );
    this.addSql(`create index "test_gateway_charge_method_index" on "test_gateway_charge" ("method_id");`);

    this.addSql(
      `alter table "saved_payment_method" add constraint "saved_payment_method_store_id_fkey" foreign key ("store_id") references "store" ("id") on update no action;`,
    );
    this.addSql(
      `alter table "saved_payment_method" add constraint "saved_payment_method_order_id_fkey" foreign key ("order_id") references "order" ("id") on update no action;`,
    );

    this.addSql(
      `alter table "test_gateway_charge" add constraint "test_gateway_charge_method_id_fkey" foreign key ("method_id") references "saved_payment_method" ("id") on update no action;`,
    );
  }

  override down(): void {
    this.addSql(`alter table "test_gateway_charge" drop constraint "test_gateway_charge_method_id_fkey";`);

    this.addSql(`drop table if exists "saved_payment_method" cascade;`);

    this.addSql(`drop table if exists "test_gateway_charge" cascade;`);
  }
}
