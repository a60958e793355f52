import { Migration } from '@mikro-orm/migrations';

export class Migration20261129052509_tax_report_credit_notes extends Migration {
  override up(): void {
    this.addSql(
      `create index "order_store_mode_credited_refunded_index" on "order" ("store_id", "livemode", "refunded_at") where "credit_note_number" is not null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "order_store_mode_credited_refunded_index";`);
  }
}
