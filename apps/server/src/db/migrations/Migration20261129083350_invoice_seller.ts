import { Migration } from '@mikro-orm/migrations';

export class Migration20261129083350_invoice_seller extends Migration {
  override up(): void {
    this.addSql(`alter table "order" add column "invoice_seller" jsonb null;`);
    // Invoices issued before the seller was kept on the order name the seller as the store's tax
    // settings name it now: the document they rendered until this migration.
    this.addSql(
      `update "order" o set "invoice_seller" = jsonb_build_object(
         'name', coalesce(nullif(s."settings"->'tax'->>'sellerName', ''), s."name"),
         'address', coalesce(s."settings"->'tax'->>'sellerAddress', ''),
         'taxId', coalesce(s."settings"->'tax'->>'sellerTaxId', ''))
       from "store" s where s."id" = o."store_id" and o."invoice_number" is not null;`,
    );
    this.addSql(
      `alter table "order" add constraint "order_invoice_seller_check" check (invoice_number is null or invoice_seller is not null);`,
    );
  }

  override down(): void {
    this.addSql(`alter table "order" drop constraint "order_invoice_seller_check";`);
    this.addSql(`alter table "order" drop column "invoice_seller";`);
  }
}
