import { Migration } from '@mikro-orm/migrations';

export class Migration20261126000343_payment_refund_ref extends Migration {
  override up(): void {
    this.addSql(`alter table "payment" add column "refund_ref" varchar(200) null;`);
  }

  override down(): void {
    this.addSql(`alter table "payment" drop column "refund_ref";`);
  }
}
