import { describe, expect, it } from 'vitest';
import { markdownText, renderMarkdown } from './markdown.js';

describe('renderMarkdown', () => {
  it('renders Markdown: bold, lists, links with rel="nofollow noopener", bare URLs linked', () => {
    expect(renderMarkdown('**Lifetime updates.**')).toBe('<p><strong>Lifetime updates.</strong></p>\n');
    expect(renderMarkdown('- one\n- two')).toBe('<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n');
    expect(renderMarkdown('[Lumen](https://example.com/lumen)')).toBe(
      '<p><a href="https://example.com/lumen" rel="nofollow noopener">Lumen</a></p>\n',
    );
    expect(renderMarkdown('See https://example.com/a.')).toBe(
      '<p>See <a href="https://example.com/a" rel="nofollow noopener">https://example.com/a</a>.</p>\n',
    );
    expect(renderMarkdown('[Write](mailto:me@example.com)')).toContain('href="mailto:me@example.com"');
    expect(renderMarkdown('line one\nline two')).toBe('<p>line one<br>\nline two</p>\n');
  });

  it('lets no raw HTML through: <script>, <img onerror>, an <a> are text', () => {
    for (const raw of [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="/x" onclick="y()">z</a>',
    ]) {
      const html = renderMarkdown(raw);
      expect(html).not.toMatch(/<(script|img|a)\b/i);
      expect(html).toContain('&lt;');
    }
    expect(renderMarkdown('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n');
  });

  it('makes no link of javascript:, data:, vbscript: or a scheme-relative address', () => {
    for (const target of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      'java&#09;script:alert(1)',
      'data:text/html,hi',
      'vbscript:msgbox(1)',
      '//evil.example/x',
    ]) {
      const html = renderMarkdown(`[click](${target})`);
      expect(html, target).not.toContain('<a ');
      expect(html.toLowerCase(), target).not.toContain('href="javascript');
    }
  });

  it('shows no image (a description is text) and puts headings below the page’s own', () => {
    expect(renderMarkdown('![pixel](https://tracker.example/p.png)')).not.toContain('<img');
    expect(renderMarkdown('# Features\n\n## More')).toBe('<h3>Features</h3>\n<h4>More</h4>\n');
    expect(renderMarkdown('##### Deep')).toBe('<h6>Deep</h6>\n');
  });

  it('answers the same HTML from its cache, and nothing for blank text', () => {
    const text = `A *fresh* text ${Math.random()}`;
    expect(renderMarkdown(text)).toBe(renderMarkdown(text));
    expect(renderMarkdown('   ')).toBe('');
  });
});

describe('markdownText', () => {
  it('is the text a reader sees, on one line', () => {
    expect(markdownText('An **arcade** racer.\n\n- Split-screen & more')).toBe('An arcade racer. Split-screen & more');
    expect(markdownText('<b>raw</b>')).toBe('<b>raw</b>');
  });
});

describe('markdownText between inline marks', () => {
  it('adds no space where a mark ended inside a sentence', () => {
    expect(markdownText('Across **twelve cities**.')).toBe('Across twelve cities.');
  });
});
