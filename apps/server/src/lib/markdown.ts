/**
 * A seller's Markdown (product descriptions) as HTML that is safe to put in a page: markdown-it
 * with raw HTML off (`<script>`, `<img onerror>` come out as text), bare URLs made links, links
 * only to http(s), mailto or a path of the page's own site (no `javascript:`, `data:`, `vbscript:`),
 * each `rel="nofollow noopener"`, no images (a page's CSP loads images from its own origin only,
 * and a description is no place for a tracking pixel), and headings moved below the page's own
 * (a description's `#` is an h3: the page has its h1 and h2s). docs/decisions.md (#38) has why.
 */
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt('default', { html: false, linkify: true, typographer: false, breaks: true });
md.disable(['image']);

/** http(s), mailto, or a path (`/…`, `#…`); anything with another scheme is left as text. */
const SAFE_LINK = /^(?:https?:\/\/|mailto:|\/(?!\/)|#)/i;
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());

md.renderer.rules.link_open = (tokens, index, options, _env, self) => {
  tokens[index]!.attrSet('rel', 'nofollow noopener');
  return self.renderToken(tokens, index, options);
};

/** `#` -> h3 ... `####` and below -> h6. */
const shiftHeading: NonNullable<typeof md.renderer.rules.heading_open> = (tokens, index, options, _env, self) => {
  const token = tokens[index]!;
  token.tag = `h${Math.min(Number(token.tag.slice(1)) + 2, 6)}`;
  return self.renderToken(tokens, index, options);
};
md.renderer.rules.heading_open = shiftHeading;
md.renderer.rules.heading_close = shiftHeading;

/**
 * Rendered descriptions by their text: a store page renders the same ones on every request, and
 * the catalog's outputs carry them. Bounded: the oldest entry leaves when it is full.
 */
const cache = new Map<string, string>();
const CACHE_SIZE = 2000;

/** A seller's Markdown as safe HTML ('' for an empty text). */
export function renderMarkdown(text: string): string {
  if (text.trim() === '') return '';
  let html = cache.get(text);
  if (html === undefined) {
    html = md.render(text);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(text, html);
  }
  return html;
}

/** The text a reader sees in the Markdown, on one line (meta descriptions, JSON-LD). */
export function markdownText(text: string): string {
  return renderMarkdown(text)
    .replace(/<\/?(?:p|li|ul|ol|h[1-6]|br|hr|blockquote|pre|table|tr|td|th)\b[^>]*>/g, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
