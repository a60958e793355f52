import { Migration } from '@mikro-orm/migrations';

export class Migration20261126052204_webhook_request_headers extends Migration {
  override up(): void {
    this.addSql(`alter table "webhook_delivery" add column "request_headers" jsonb null;`);
  }

  override down(): void {
    this.addSql(`alter table "webhook_delivery" drop column "request_headers";`);
  }
}
