import { Migration } from '@mikro-orm/migrations';

export class Migration20261126051230_product_images extends Migration {
  override up(): void {
    this.addSql(`alter table "product" add column "images" jsonb not null default '[]';`);
  }

  override down(): void {
    this.addSql(`alter table "product" drop column "images";`);
  }
}
