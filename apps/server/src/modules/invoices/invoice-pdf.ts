/**
 * An invoice or credit note (invoice-document.ts) as a PDF, with pdfkit. The text is set in DejaVu
 * Sans Condensed (the `dejavu-fonts-ttf` package), embedded as the subset of glyphs the document
 * uses (pdfkit subsets it: some 10-30 KB a document), because a seller's or buyer's name and
 * address may be in any Latin, Greek or Cyrillic script: pdfkit's standard Helvetica covers
 * Latin-1 only and printed anything else wrongly. One A4 page for a usual order; a long one runs
 * on, the table's head repeated on each page.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';
import type { InvoiceDocument } from './invoice-document.js';

const MARGIN = 50;
const FONT = 'Sans';
const BOLD = 'Sans-Bold';

/**
 * The two faces, parsed once per process when the first document is rendered (fontkit, the
 * parser pdfkit itself uses; pdfkit takes a parsed font as it is). Parsing a 650 KB face again
 * for every document was most of a render's time. Each document still embeds its own subset.
 */
let fonts: { regular: fontkit.Font; bold: fontkit.Font } | undefined;
function fontFaces(): { regular: fontkit.Font; bold: fontkit.Font } {
  if (!fonts) {
    const require = createRequire(import.meta.url);
    const face = (name: string) =>
      fontkit.create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${name}`))) as fontkit.Font;
    fonts = { regular: face('DejaVuSansCondensed.ttf'), bold: face('DejaVuSansCondensed-Bold.ttf') };
  }
  return fonts;
}

interface Column {
  header: string;
  width: number;
  align: 'left' | 'right';
  cell: (line: InvoiceDocument['lines'][number]) => string;
}

const COLUMNS: Column[] = [
  { header: 'Description', width: 139, align: 'left', cell: (line) => line.description },
  { header: 'Qty', width: 28, align: 'right', cell: (line) => String(line.quantity) },
  { header: 'Unit price', width: 58, align: 'right', cell: (line) => line.unitPrice },
  { header: 'Discount', width: 54, align: 'right', cell: (line) => line.discount },
  { header: 'Net', width: 60, align: 'right', cell: (line) => line.net },
  { header: 'Rate', width: 36, align: 'right', cell: (line) => line.rate },
  { header: 'Tax', width: 56, align: 'right', cell: (line) => line.tax },
  { header: 'Total', width: 64, align: 'right', cell: (line) => line.total },
];
const GAP = 0;

/** Renders the document; resolves with the PDF's bytes. */
export function renderInvoicePdf(document: InvoiceDocument, issuedAt: Date): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    // Fixed, so the same document renders to the same bytes.
    info: {
      Title: `${document.title} ${document.number}`,
      Author: document.seller.name,
      Creator: 'svc',
      Producer: 'svc',
      CreationDate: issuedAt,
    },
  });
  const { regular, bold } = fontFaces();
  // pdfkit opens a parsed fontkit font as it is (its font factory's `layout` check); its types
  // name only paths and buffers.
  doc.registerFont(FONT, regular as unknown as Buffer);
  doc.registerFont(BOLD, bold as unknown as Buffer);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  layOut(doc, document);
  doc.end();
  return done;
}

function layOut(doc: PDFKit.PDFDocument, document: InvoiceDocument): void {
  const left = MARGIN;
  const width = doc.page.width - 2 * MARGIN;
  const half = width / 2;

  // Head: the title and number left, the dates right.
  doc.font(BOLD).fontSize(20).text(`${document.title} ${document.number}`, left, MARGIN, { width });
  let y = doc.y + 6;
  doc.font(FONT).fontSize(10);
  const facts: Array<[string, string]> = [
    [document.kind === 'creditNote' ? 'Credit note date' : 'Invoice date', document.date],
    ['Order', document.orderNumber],
    ['Currency', document.currency],
  ];
  for (const [label, value] of facts) {
    doc.font(BOLD).text(`${label}: `, left, y, { continued: true }).font(FONT).text(value);
    y = doc.y;
  }
  if (document.credits) {
    doc.font(BOLD).text(document.credits, left, y + 2, { width });
    y = doc.y;
  }

  // The parties, side by side.
  y += 14;
  const top = y;
  const block = (x: number, heading: string, rows: string[]) => {
    doc
      .font(BOLD)
      .fontSize(9)
      .fillColor('#555555')
      .text(heading.toUpperCase(), x, top, { width: half - 10 });
    doc.font(FONT).fontSize(10).fillColor('#000000');
    for (const row of rows) doc.text(row, x, doc.y, { width: half - 10 });
    return doc.y;
  };
  const { seller, buyer } = document;
  const sellerBottom = block(left, 'Seller', [
    seller.name,
    ...seller.addressLines,
    ...(seller.taxId ? [`VAT id: ${seller.taxId}`] : []),
  ]);
  const buyerBottom = block(left + half, 'Bill to', [
    ...(buyer.name ? [buyer.name] : []),
    ...buyer.addressLines,
    ...(buyer.country ? [`Country: ${buyer.country}`] : []),
    ...(buyer.taxId ? [`VAT id: ${buyer.taxId}`] : []),
    buyer.email,
  ]);
  y = Math.max(sellerBottom, buyerBottom) + 20;

  // The lines.
  y = tableHead(doc, y, document.currency);
  for (const line of document.lines) {
    const height = rowHeight(doc, line);
    if (y + height > doc.page.height - MARGIN - 20) {
      doc.addPage();
      y = tableHead(doc, MARGIN, document.currency);
    }
    let x = left;
    doc.font(FONT).fontSize(9);
    for (const column of COLUMNS) {
      doc.text(column.cell(line), x, y, { width: column.width - 4, align: column.align });
      x += column.width + GAP;
    }
    y += height + 4;
  }
  doc
    .moveTo(left, y)
    .lineTo(left + width, y)
    .strokeColor('#999999')
    .stroke();
  y += 8;
  doc.font(FONT).fontSize(8).fillColor('#555555').text(document.pricesNote, left, y, { width });
  doc.fillColor('#000000');
  y = doc.y + 14;

  // Tax per rate, then the totals, in the right half.
  const needed = 60 + 14 * (document.taxByRate.length + 4) + (document.reverseChargeNote ? 40 : 0);
  if (y + needed > doc.page.height - MARGIN) {
    doc.addPage();
    y = MARGIN;
  }
  const labelX = left + half - 40;
  const labelWidth = half - 80;
  const amountX = labelX + labelWidth;
  const amountWidth = left + width - amountX - 4;
  const row = (label: string, amount: string, bold = false) => {
    doc.font(bold ? BOLD : FONT).fontSize(10);
    doc.text(label, labelX, y, { width: labelWidth - 4 });
    doc.text(amount, amountX, y, { width: amountWidth, align: 'right' });
    y += 14;
  };
  doc.font(BOLD).fontSize(9).fillColor('#555555').text('TAX PER RATE', labelX, y, { width: half });
  doc.fillColor('#000000');
  y = doc.y + 2;
  for (const group of document.taxByRate) row(`Tax ${group.rate} on ${group.net}`, group.tax);
  y += 6;
  row(`Net (${document.currency})`, document.totals.net);
  row(`Tax (${document.currency})`, document.totals.tax);
  row(
    document.kind === 'creditNote' ? `Total credited (${document.currency})` : `Total (${document.currency})`,
    document.totals.gross,
    true,
  );
  if (document.reverseChargeNote) {
    y += 12;
    doc.font(BOLD).fontSize(10).text(document.reverseChargeNote, left, y, { width });
  }
}

function tableHead(doc: PDFKit.PDFDocument, y: number, currency: string): number {
  let x = MARGIN;
  doc.font(BOLD).fontSize(9);
  for (const column of COLUMNS) {
    doc.text(column.header, x, y, { width: column.width - 4, align: column.align });
    x += column.width + GAP;
  }
  doc
    .font(FONT)
    .fontSize(7)
    .fillColor('#555555')
    .text(`Amounts in ${currency}`, MARGIN, y + 12);
  doc.fillColor('#000000');
  const bottom = y + 22;
  doc
    .moveTo(MARGIN, bottom)
    .lineTo(doc.page.width - MARGIN, bottom)
    .strokeColor('#999999')
    .stroke();
  return bottom + 6;
}

function rowHeight(doc: PDFKit.PDFDocument, line: InvoiceDocument['lines'][number]): number {
  doc.font(FONT).fontSize(9);
  return Math.max(...COLUMNS.map((column) => doc.heightOfString(column.cell(line), { width: column.width - 4 })));
}
