import { Migration } from '@mikro-orm/migrations';

export class Migration20261122225838_event_prune_index extends Migration {
  override up(): void {
    this.addSql(
      `create index "event_dispatched_created_index" on "event" ("created_at") where "dispatched_at" is not null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "event_dispatched_created_index";`);
  }
}
