import { Migration } from '@mikro-orm/migrations';

export class Migration20261125223429_payment_proofs_kept extends Migration {
  override up(): void {
    this.addSql(`alter table "file" add column "order_id" varchar(32) null, add column "proof_number" int null;`);
    // The proof each order shows today becomes its first kept proof. Older proofs no order names
    // stay unattached (order_id null): nothing prunes them, as before.
    this.addSql(
      `update "file" set "order_id" = o."id", "proof_number" = 1 from "order" o where o."payment_proof_file_id" = "file"."id";`,
    );
    this.addSql(
      `alter table "file" add constraint "file_order_id_fkey" foreign key ("order_id") references "order" ("id") on update no action on delete no action;`,
    );
    this.addSql(`alter table "file" add constraint "file_order_proof_unique" unique ("order_id", "proof_number");`);
    this.addSql(
      `alter table "file" add constraint file_proof_check check((order_id is null) = (proof_number is null));`,
    );
  }

  override down(): void {
    this.addSql(`alter table "file" drop constraint "file_order_id_fkey";`);

    this.addSql(`alter table "file" drop constraint "file_order_proof_unique";`);
    this.addSql(`alter table "file" drop constraint file_proof_check;`);
    this.addSql(`alter table "file" drop column "order_id", drop column "proof_number";`);
  }
}
