import { Migration } from '@mikro-orm/migrations';

export class Migration20261128125122_store_onboarding extends Migration {
  override up(): void {
    this.addSql(
      `alter table "store" add column "payment_methods_chosen_at" timestamptz null, add column "first_previewed_at" timestamptz null;`,
    );

    this.addSql(`create index "api_key_store_ids_index" on "api_key" using gin ("store_ids");`);

    // A store whose seller saved payment methods before the mark existed has chosen them (added by hand).
    this.addSql(
      `update "store" set "payment_methods_chosen_at" = "updated_at" where "settings" -> 'paymentMethods' is not null;`,
    );
  }

  override down(): void {
    this.addSql(`drop index "api_key_store_ids_index";`);

    this.addSql(`alter table "store" drop column "payment_methods_chosen_at", drop column "first_previewed_at";`);
  }
}
