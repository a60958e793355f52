import { Migration } from '@mikro-orm/migrations';

export class Migration20261124004151_license_api extends Migration {
  override up(): void {
    this.addSql(
      `create table "license_instance" ("id" varchar(32) not null, "license_key_id" varchar(32) not null, "name" varchar(200) not null, "created_at" timestamptz not null, constraint "license_instance_pkey" primary key ("id"));`,
    );
    this.addSql(
      `alter table "license_instance" add constraint "license_instance_key_name_unique" unique ("license_key_id", "name");`,
    );

    this.addSql(
      `alter table "license_instance" add constraint "license_instance_license_key_id_fkey" foreign key ("license_key_id") references "license_key" ("id") on update no action on delete cascade;`,
    );

    this.addSql(
      `alter table "product" add column "license_activation_limit" int null, add column "license_validity_days" int null;`,
    );
    this.addSql(
      `alter table "product" add constraint product_license_activation_limit_check check(license_activation_limit is null or license_activation_limit >= 1 and license_activation_limit <= 10000);`,
    );
    this.addSql(
      `alter table "product" add constraint product_license_validity_days_check check(license_validity_days is null or license_validity_days >= 1 and license_validity_days <= 36500);`,
    );

    this.addSql(`alter table "license_key" add column "disabled_at" timestamptz null;`);
  }

  override down(): void {
    this.addSql(`drop table if exists "license_instance" cascade;`);

    this.addSql(`alter table "license_key" drop column "disabled_at";`);

    this.addSql(`alter table "product" drop constraint product_license_activation_limit_check;`);
    this.addSql(`alter table "product" drop constraint product_license_validity_days_check;`);
    this.addSql(`alter table "product" drop column "license_activation_limit", drop column "license_validity_days";`);
  }
}
