import { Migration } from '@mikro-orm/migrations';

export class Migration20261128104500_order_coupon_code extends Migration {
  override up(): void {
    this.addSql(`alter table "order" add column "coupon_code" varchar(64) null;`);
    // Orders placed before the code was kept on the order take their coupon's code as it is now.
    this.addSql(
      `update "order" o set "coupon_code" = c."code" from "coupon" c where c."id" = o."coupon_id" and o."coupon_code" is null;`,
    );
  }

  override down(): void {
    this.addSql(`alter table "order" drop column "coupon_code";`);
  }
}
