import { Migration } from '@mikro-orm/migrations';

export class Migration20261125123055_endpoint_due_index extends Migration {
  override up(): void {
    this.addSql(
      `create index "webhook_delivery_endpoint_due_index" on "webhook_delivery" ("webhook_id", "due_at", "id") where "status" = 'queued';`,
    );
  }

  override down(): void {
    this.addSql(`drop index "webhook_delivery_endpoint_due_index";`);
  }
}
