import { Migration } from '@mikro-orm/migrations';

export class Migration20261126023435_store_look extends Migration {
  override up(): void {
    this.addSql(
      `alter table "store" add column "description" text not null default '', add column "accent_color" varchar(7) null, add column "logo_file_id" varchar(32) null;`,
    );

    // Written by hand between the generated statements: existing products get a slug from their
    // name and id (unique, as ids are), before the column becomes not null.
    this.addSql(`alter table "product" add column "slug" varchar(100) null;`);
    this.addSql(
      `update "product" set "slug" = coalesce(nullif(trim(both '-' from left(lower(regexp_replace("name", '[^A-Za-z0-9]+', '-', 'g')), 80)), ''), 'product') || '-' || left("id", 8);`,
    );
    this.addSql(`alter table "product" alter column "slug" set not null;`);
    this.addSql(`alter table "product" add constraint "product_store_slug_unique" unique ("store_id", "slug");`);
  }

  override down(): void {
    this.addSql(`alter table "product" drop constraint "product_store_slug_unique";`);
    this.addSql(`alter table "product" drop column "slug";`);

    this.addSql(
      `alter table "store" drop column "description", drop column "accent_color", drop column "logo_file_id";`,
    );
  }
}
