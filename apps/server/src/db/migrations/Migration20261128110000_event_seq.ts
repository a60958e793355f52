import { Migration } from '@mikro-orm/migrations';

export class Migration20261128110000_event_seq extends Migration {
  override up(): void {
    this.addSql(`alter table "event" add column "seq" bigserial;`);
    this.addSql(`drop index "event_undispatched_index";`);
    this.addSql(
      `create index "event_undispatched_index" on "event" ("created_at", "seq") where "dispatched_at" is null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "event_undispatched_index";`);
    this.addSql(`create index "event_undispatched_index" on "event" ("created_at") where "dispatched_at" is null;`);
    this.addSql(`alter table "event" drop column "seq";`);
  }
}
