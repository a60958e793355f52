/** A real SMTP listener on loopback that keeps what it receives, for tests that read e-mail. */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  subject: string;
  /** The text/plain body (of a multipart mail, its text/plain part). */
  text: string;
  /** The text/html part of a multipart mail; undefined for a text-only mail. */
  html?: string;
}

/** Quoted-printable to the bytes it stands for (soft line breaks dropped). */
function quotedPrintableBytes(text: string): Buffer {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const hex = soft.slice(i + 1, i + 3);
    if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

function decodeBytes(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return bytes.toString('utf8');
  }
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** RFC 2047 encoded words (`=?UTF-8?Q?Caf=C3=A9?=`), as nodemailer writes non-ASCII headers. */
function decodeHeader(value: string): string {
  // Whitespace between two adjacent encoded words is not part of the text (RFC 2047 section 6.2).
  const joined = value.replace(/(\?=)[ \t]+(?==\?)/g, '$1');
  return joined.replace(ENCODED_WORD, (_, charset: string, encoding: string, data: string) =>
    decodeBytes(
      encoding.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : quotedPrintableBytes(data.replace(/_/g, ' ')),
      charset,
    ),
  );
}

/** A MIME entity's header field, unfolded (the whitespace after a fold belongs to the value). */
function headerOf(head: string, name: string): string {
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(head.replace(/\r\n(?=[ \t])/g, ''))?.[1]?.trim() ?? '';
}

/** A single-part entity's body, decoded by its transfer encoding and charset. */
function decodeBody(head: string, body: string): string {
  const encoding = headerOf(head, 'Content-Transfer-Encoding').toLowerCase();
  const charset = /charset="?([^";\s]+)"?/i.exec(headerOf(head, 'Content-Type'))?.[1] ?? 'utf-8';
  const text =
    encoding === 'quoted-printable'
      ? decodeBytes(quotedPrintableBytes(body), charset)
      : encoding === 'base64'
        ? decodeBytes(Buffer.from(body, 'base64'), charset)
        : body;
  return text.trim();
}

/** The text/plain and text/html leaves of an entity, multipart ones walked (nodemailer's text + html is multipart/alternative). */
function leaves(entity: string): { text?: string; html?: string } {
  const split = entity.indexOf('\r\n\r\n');
  const head = split < 0 ? entity : entity.slice(0, split);
  const body = split < 0 ? '' : entity.slice(split + 4);
  const type = headerOf(head, 'Content-Type');
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    const found: { text?: string; html?: string } = {};
    const parts = body.split(`--${boundary}`).slice(1);
    for (const part of parts) {
      if (part.startsWith('--')) break;
      const leaf = leaves(part.replace(/^\r\n/, ''));
      found.text ??= leaf.text;
      found.html ??= leaf.html;
    }
    return found;
  }
  return /^text\/html/i.test(type) ? { html: decodeBody(head, body) } : { text: decodeBody(head, body) };
}

function parse(raw: string, to: string[]): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const { text, html } = leaves(raw);
  return {
    to,
    subject: decodeHeader(headerOf(raw.slice(0, split), 'Subject')),
    text: text ?? '',
    ...(html === undefined ? {} : { html }),
  };
}

export interface SmtpListenerOptions {
  /** The port to listen on (default: a free one). */
  port?: number;
  /** While it returns true, every recipient is refused with 451 (a server that is up but not taking mail). */
  refusing?: () => boolean;
}

export async function startSmtpListener(opts: SmtpListenerOptions = {}): Promise<{
  url: string;
  mails: ReceivedMail[];
  /** Recipients refused so far (with `refusing`). */
  refused: string[];
  waitFor: (match: (mail: ReceivedMail) => boolean, timeoutMs?: number) => Promise<ReceivedMail>;
  stop: () => Promise<void>;
}> {
  const mails: ReceivedMail[] = [];
  const refused: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!opts.refusing?.()) return callback();
      refused.push(address.address);
      callback(Object.assign(new Error('Try again later'), { responseCode: 451 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push(
          parse(
            Buffer.concat(chunks).toString('utf8'),
            session.envelope.rcptTo.map((r) => r.address),
          ),
        );
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    refused,
    async waitFor(match, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = mails.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no matching e-mail within ${timeoutMs} ms; got: ${JSON.stringify(mails.map((m) => m.subject))}`);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
