import { Migration } from '@mikro-orm/migrations';

export class Migration20261129051327_tax_and_invoices extends Migration {
  override up(): void {
    this.addSql(
      `create table "invoice_counter" ("store_id" varchar(32) not null, "livemode" boolean not null, "kind" text check ("kind" in ('INV', 'CN')) not null, "year" int not null, "last" int not null, constraint "invoice_counter_pkey" primary key ("store_id", "livemode", "kind", "year"));`,
    );

    this.addSql(
      `alter table "product" add column "tax_category" text check ("tax_category" in ('standard', 'ebook')) not null default 'standard';`,
    );

    this.addSql(
      `alter table "order" add column "tax_behavior" text check ("tax_behavior" in ('exclusive', 'inclusive')) null, add column "tax_minor" bigint not null default 0, add column "tax_rate_ppm" int null, add column "tax_country" varchar(2) null, add column "reverse_charge" boolean not null default false, add column "billing_country" varchar(2) null, add column "buyer_tax_id" varchar(20) null, add column "billing_name" varchar(200) null, add column "billing_address" text null, add column "invoice_number" varchar(24) null, add column "credit_note_number" varchar(24) null;`,
    );
    this.addSql(
      `create unique index "order_store_mode_invoice_unique" on "order" ("store_id", "livemode", "invoice_number") where "invoice_number" is not null;`,
    );
    this.addSql(
      `create unique index "order_store_mode_credit_note_unique" on "order" ("store_id", "livemode", "credit_note_number") where "credit_note_number" is not null;`,
    );
    this.addSql(
      `create index "order_store_mode_invoiced_paid_index" on "order" ("store_id", "livemode", "paid_at") where "invoice_number" is not null;`,
    );

    this.addSql(
      `alter table "order_line" add column "tax_category" text check ("tax_category" in ('standard', 'ebook')) not null default 'standard', add column "discount_minor" bigint not null default 0, add column "net_minor" bigint not null default 0, add column "tax_minor" bigint not null default 0, add column "tax_rate_ppm" int not null default 0;`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "invoice_counter" cascade;`);

    this.addSql(`drop index "order_store_mode_invoice_unique";`);
    this.addSql(`drop index "order_store_mode_credit_note_unique";`);
    this.addSql(`drop index "order_store_mode_invoiced_paid_index";`);
    this.addSql(
      `alter table "order" drop column "tax_behavior", drop column "tax_minor", drop column "tax_rate_ppm", drop column "tax_country", drop column "reverse_charge", drop column "billing_country", drop column "buyer_tax_id", drop column "billing_name", drop column "billing_address", drop column "invoice_number", drop column "credit_note_number";`,
    );

    this.addSql(
      `alter table "order_line" drop column "tax_category", drop column "discount_minor", drop column "net_minor", drop column "tax_minor", drop column "tax_rate_ppm";`,
    );

    this.addSql(`alter table "product" drop column "tax_category";`);
  }
}
