/**
 * Mail kept instead of sent: without SMTP_URL (outside production; production refuses to start
 * without it) every mail is written to the outbound_email table, its text sealed, and shown at
 * /dev/mailbox and to tests (keptMail).
 */
import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../../lib/clock.js';
import { deriveKey, seal, unseal } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { Mailer, OutgoingMail } from '../../lib/mailer.js';
import { OutboundEmailSchema, type OutboundEmail } from './mail.entities.js';

/**
 * Kept mail carries what the mail is for (password-reset links, sign-in codes, order links), so
 * its text is sealed under the app key (`outbox-mail`): a copy of the table holds none of them.
 */
const mailKey = (encryptionKey: Buffer) => deriveKey(encryptionKey, 'outbox-mail');
/** Kept before texts were sealed (no prefix): shown as they are. */
const SEALED_PREFIX = 'sealed:v1:';
const openText = (encryptionKey: Buffer, text: string) =>
  text.startsWith(SEALED_PREFIX) ? unseal(mailKey(encryptionKey), text.slice(SEALED_PREFIX.length)) : text;

export class OutboxMailer implements Mailer {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly encryptionKey: Buffer,
  ) {}

  async send(mail: OutgoingMail): Promise<void> {
    await this.orm.em.fork().insert(OutboundEmailSchema, {
      id: newId(),
      ...mail,
      text: `${SEALED_PREFIX}${seal(mailKey(this.encryptionKey), mail.text)}`,
      createdAt: this.clock.now(),
    });
  }
}

/** Kept mail matching `where`, newest first, its text opened (the mailbox, tests). */
export async function keptMail(
  em: EntityManager,
  encryptionKey: Buffer,
  where: FilterQuery<OutboundEmail> = {},
  limit = 50,
): Promise<OutboundEmail[]> {
  const rows = await em.find(OutboundEmailSchema, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
  return rows.map((row) => ({ ...row, text: openText(encryptionKey, row.text) }));
}
