/** E-mail kept when no SMTP server is configured (shown at /dev/mailbox outside production). */
import { defineEntity, type InferEntity } from '@mikro-orm/core';

export const OutboundEmailSchema = defineEntity({
  name: 'OutboundEmail',
  tableName: 'outbound_email',
  properties: (p) => ({
    id: p.string().primary().length(32),
    to: p.string().length(320),
    subject: p.string().length(300),
    text: p.text(),
    createdAt: p.datetime(),
  }),
});
export type OutboundEmail = InferEntity<typeof OutboundEmailSchema>;
