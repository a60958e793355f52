/**
 * WCAG 2 colour contrast, for colours the seller picks (the store's accent): relative luminance
 * and the contrast ratio of two `#rrggbb` colours, and a colour mixed toward another.
 */

const HEX = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i;

function channels(color: string): [number, number, number] {
  const match = HEX.exec(color);
  if (!match) throw new RangeError(`not a #rrggbb colour: ${color}`);
  return [parseInt(match[1]!, 16), parseInt(match[2]!, 16), parseInt(match[3]!, 16)];
}

/** WCAG 2's relative luminance of a `#rrggbb` colour, 0 (black) to 1 (white). */
export function relativeLuminance(color: string): number {
  const [r, g, b] = channels(color).map((value) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** WCAG 2's contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return (light! + 0.05) / (dark! + 0.05);
}

/** `color` moved `amount` (0..1) of the way toward `toward`, in sRGB, as `#rrggbb`. */
export function mix(color: string, toward: string, amount: number): string {
  const from = channels(color);
  const to = channels(toward);
  return `#${from
    .map((value, i) =>
      Math.round(value + (to[i]! - value) * amount)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}
