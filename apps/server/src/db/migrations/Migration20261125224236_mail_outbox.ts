import { Migration } from '@mikro-orm/migrations';

export class Migration20261125224236_mail_outbox extends Migration {
  override up(): void {
    this.addSql(
      `alter table "outbound_email" add column "html" text null, add column "status" text check ("status" in ('kept', 'queued', 'sent', 'failed')) not null default 'kept', add column "attempts" int not null default 0, add column "due_at" timestamptz null, add column "locked_until" timestamptz null, add column "sent_at" timestamptz null, add column "last_error" varchar(500) null, add column "dedupe_key" varchar(200) null;`,
    );
    this.addSql(
      `alter table "outbound_email" add constraint "outbound_email_dedupe_key_unique" unique ("dedupe_key");`,
    );
    this.addSql(`create index "outbound_email_due_index" on "outbound_email" ("due_at") where "status" = 'queued';`);
    this.addSql(
      `create index "outbound_email_finished_index" on "outbound_email" ("created_at") where "status" in ('sent', 'failed');`,
    );
  }

  override down(): void {
    this.addSql(`alter table "outbound_email" drop constraint "outbound_email_dedupe_key_unique";`);
    this.addSql(`drop index "outbound_email_due_index";`);
    this.addSql(`drop index "outbound_email_finished_index";`);
    this.addSql(
      `alter table "outbound_email" drop column "html", drop column "status", drop column "attempts", drop column "due_at", drop column "locked_until", drop column "sent_at", drop column "last_error", drop column "dedupe_key";`,
    );
  }
}
