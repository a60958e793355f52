/**
 * The HTML shell every e-mail svc sends to buyers is laid out in (the receipt, the subscription
 * mails): one column of at most 600 px, inline styles only (mail clients drop style sheets), the
 * subject as the document's title. The caller gives the body's markup, already escaped.
 */
import { escapeHtml } from '../../lib/html.js';

export function mailDocument(subject: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(subject)}</title>
</head>
<body style="margin:0;padding:0;background:#f4f4f5;">
<div style="max-width:600px;margin:0 auto;padding:24px;background:#ffffff;color:#1a1a1a;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5;">
${body}
</div>
</body>
</html>
`;
}
