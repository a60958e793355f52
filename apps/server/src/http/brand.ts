/**
 * The store's brand on every buyer page (storefront, checkout, pay, order, customer area): its
 * logo and name in a header that links back to the store (or to the theme the buyer came from),
 * and its accent colour on buttons and links.
 *
 * The accent is set as the design tokens' `--svc-accent` (and its hover, soft and focus shades) in
 * one small inline `<style>` that the page's CSP allows by its hash: the pages have no inline style
 * otherwise, and a hash keeps a page's bytes the same on every request (the storefront's ETag).
 * Each colour scheme takes the seller's colour only when it reaches WCAG AA (4.5:1) as text on that
 * scheme's backgrounds and under the button's text; otherwise that scheme keeps the token accent,
 * so no choice of the seller's makes a link or a button unreadable (docs/decisions.md, #38).
 */
import { createHash } from 'node:crypto';
import { contrastRatio, mix } from '../lib/contrast.js';
import { escapeHtml } from '../lib/html.js';

/** What the header shows of the store. */
export interface Brand {
  name: string;
  subdomain: string;
  logoUrl?: string | null | undefined;
  accentColor?: string | null | undefined;
}

/**
 * The backgrounds links and buttons sit on in each scheme (`--svc-bg`, `--svc-surface`,
 * `--svc-surface-raised`) and the button text on the accent (`--svc-accent-text`), as
 * packages/tokens/tokens.css defines them (brand.test.ts holds the two equal).
 */
export const SCHEMES = {
  light: { backgrounds: ['#ffffff', '#f6f7f9', '#ffffff'], accentText: '#ffffff', hoverToward: '#000000' },
  dark: { backgrounds: ['#111318', '#181b21', '#1f232b'], accentText: '#0b1020', hoverToward: '#ffffff' },
} as const;

/** WCAG AA for normal text. */
const AA = 4.5;

/** Whether `accent` is readable as a link on every background of the scheme and under the button's text. */
export function accentFits(accent: string, scheme: keyof typeof SCHEMES): boolean {
  const { backgrounds, accentText } = SCHEMES[scheme];
  return (
    backgrounds.every((background) => contrastRatio(accent, background) >= AA) &&
    contrastRatio(accent, accentText) >= AA
  );
}

function schemeRule(accent: string, scheme: keyof typeof SCHEMES): string {
  const { backgrounds, hoverToward } = SCHEMES[scheme];
  const hover = mix(accent, hoverToward, scheme === 'light' ? 0.15 : 0.2);
  const soft = mix(accent, backgrounds[0], scheme === 'light' ? 0.88 : 0.8);
  return `@media (prefers-color-scheme:${scheme}){:root{--svc-accent:${accent};--svc-accent-hover:${hover};--svc-accent-soft:${soft};--svc-focus:${accent}}}`;
}

export interface BrandStyle {
  css: string;
  /** The CSP source that allows the inline style. */
  hash: string;
}

/**
 * The inline style that puts the store's accent in the schemes it fits, with its CSP hash; none
 * when there is no accent, it is not a `#rrggbb`, or it fits neither scheme.
 */
export function brandStyle(accentColor: string | null | undefined): BrandStyle | undefined {
  if (!accentColor || !/^#[0-9a-f]{6}$/i.test(accentColor)) return undefined;
  const accent = accentColor.toLowerCase();
  const css = (['light', 'dark'] as const)
    .filter((scheme) => accentFits(accent, scheme))
    .map((scheme) => schemeRule(accent, scheme))
    .join('');
  if (!css) return undefined;
  return { css, hash: `'sha256-${createHash('sha256').update(css).digest('base64')}'` };
}

/** A page's Content-Security-Policy with its brand style allowed. */
export function cspWithStyle(csp: string, style: BrandStyle | undefined): string {
  return style ? csp.replace("style-src 'self'", `style-src 'self' ${style.hash}`) : csp;
}

/**
 * The store's mark: its logo (decorative: the name beside it says the same) and its name, as a
 * link to `href`, or as plain text when the page has nowhere to go back to (a framed checkout).
 */
export function storeMark(brand: Brand, href: string | undefined): string {
  const logo = brand.logoUrl
    ? `<img class="store-logo" src="${escapeHtml(brand.logoUrl)}" alt="" width="40" height="40">`
    : '';
  const inner = `${logo}<span>${escapeHtml(brand.name)}</span>`;
  return href
    ? `<a class="store-name" href="${escapeHtml(href)}">${inner}</a>`
    : `<span class="store-name">${inner}</span>`;
}

/** The header of a buyer page: the store's mark, and what the page puts beside it (the cart link). */
export function storeHeader(brand: Brand, href: string | undefined, aside = ''): string {
  return `<header class="store-bar"><div class="store-bar-inner">
${storeMark(brand, href)}${aside ? `\n${aside}` : ''}
</div></header>`;
}

/** The hosted storefront's address of the store. */
export const storefrontPath = (brand: Pick<Brand, 'subdomain'>): string => `/s/${encodeURIComponent(brand.subdomain)}`;
