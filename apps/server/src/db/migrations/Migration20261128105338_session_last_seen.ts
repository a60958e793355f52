import { Migration } from '@mikro-orm/migrations';

export class Migration20261128105338_session_last_seen extends Migration {
  override up(): void {
    this.addSql(`alter table "session" add column "last_seen_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql(`alter table "session" drop column "last_seen_at";`);
  }
}
