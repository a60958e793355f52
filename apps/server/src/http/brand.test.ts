import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { contrastRatio, mix } from '../lib/contrast.js';
import { accentFits, brandStyle, cspWithStyle, SCHEMES, storeHeader } from './brand.js';

const tokens = readFileSync(createRequire(import.meta.url).resolve('@svc/tokens/tokens.css'), 'utf8');

/** A token's value in the light block (the first) or the dark one. */
function token(name: string, scheme: 'light' | 'dark'): string {
  const [light, dark] = tokens.split('@media (prefers-color-scheme: dark)');
  const match = new RegExp(`--svc-${name}:\\s*(#[0-9a-f]{6})`, 'i').exec(scheme === 'light' ? light! : dark!);
  return match![1]!.toLowerCase();
}

describe('the store accent', () => {
  it('checks against the tokens’ own backgrounds and button text', () => {
    for (const scheme of ['light', 'dark'] as const) {
      expect(SCHEMES[scheme].backgrounds).toEqual([
        token('bg', scheme),
        token('surface', scheme),
        token('surface-raised', scheme),
      ]);
      expect(SCHEMES[scheme].accentText).toBe(token('accent-text', scheme));
      // The token accent itself passes the check it falls back to.
      expect(accentFits(token('accent', scheme), scheme)).toBe(true);
    }
  });

  it('computes WCAG contrast: black on white is 21:1, a colour on itself 1:1', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#777777', '#777777')).toBe(1);
    expect(contrastRatio('#1d4ed8', '#ffffff')).toBeCloseTo(6.7, 1);
    expect(mix('#000000', '#ffffff', 0.5)).toBe('#808080');
  });

  it('takes a dark accent in the light scheme only, and a light one in the dark scheme only', () => {
    const teal = brandStyle('#0F766E')!;
    expect(teal.css).toContain('@media (prefers-color-scheme:light){:root{--svc-accent:#0f766e;');
    expect(teal.css).not.toContain('prefers-color-scheme:dark');

    // Too light for AA on white: the light scheme keeps the token accent.
    const yellow = brandStyle('#fde047')!;
    expect(contrastRatio('#fde047', '#ffffff')).toBeLessThan(4.5);
    expect(yellow.css).not.toContain('prefers-color-scheme:light');
    expect(yellow.css).toContain('@media (prefers-color-scheme:dark){:root{--svc-accent:#fde047;');

    // A mid grey fits neither: no style at all.
    expect(brandStyle('#808080')).toBeUndefined();
    expect(brandStyle(null)).toBeUndefined();
    expect(brandStyle('red')).toBeUndefined();
    expect(brandStyle('#12345g')).toBeUndefined();
  });

  it('keeps every shade it sets readable: hover under the button text, the accent as a link', () => {
    for (const accent of ['#0f766e', '#7c3aed', '#b91c1c', '#000000', '#1d4ed8']) {
      const css = brandStyle(accent)!.css;
      const hover = /--svc-accent-hover:(#[0-9a-f]{6})/.exec(css)![1]!;
      expect(contrastRatio(hover, '#ffffff'), accent).toBeGreaterThanOrEqual(4.5);
    }
    for (const accent of ['#fde047', '#8ab4ff', '#ffffff', '#5eead4']) {
      const dark = brandStyle(accent)!.css;
      const hover = /--svc-accent-hover:(#[0-9a-f]{6})/.exec(dark)![1]!;
      expect(contrastRatio(hover, '#0b1020'), accent).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('allows its style by hash in the CSP, and nothing else', () => {
    const style = brandStyle('#0f766e')!;
    expect(style.hash).toMatch(/^'sha256-[A-Za-z0-9+/]+=*'$/);
    expect(cspWithStyle("default-src 'none'; style-src 'self'", style)).toBe(
      `default-src 'none'; style-src 'self' ${style.hash}`,
    );
    expect(cspWithStyle("style-src 'self'", undefined)).toBe("style-src 'self'");
  });
});

describe('the store header', () => {
  it('links the logo and name back, escaped; in a frame it is not a link', () => {
    const brand = { name: 'Nebula <Games>', subdomain: 'nebula', logoUrl: '/s/nebula/logo/f1' };
    expect(storeHeader(brand, '/s/nebula')).toContain(
      '<a class="store-name" href="/s/nebula"><img class="store-logo" src="/s/nebula/logo/f1" alt="" width="40" height="40"><span>Nebula &lt;Games&gt;</span></a>',
    );
    expect(storeHeader(brand, undefined)).toContain('<span class="store-name">');
    expect(storeHeader({ name: 'Plain', subdomain: 'plain' }, 'https://theme.example/?a=1&b=2')).toContain(
      '<a class="store-name" href="https://theme.example/?a=1&amp;b=2"><span>Plain</span></a>',
    );
  });
});
