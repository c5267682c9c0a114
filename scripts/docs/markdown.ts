// Markdown helpers the reference generators share: the generated-page banner,
// tables, GitHub's heading slugs (the link check uses the same ones) and
// Prettier with the project's settings, so a page is byte-for-byte reproducible.
import { format, resolveConfig } from 'prettier';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A page's first line: that it is generated, from what (repository paths), and how to make it again. */
export const banner = (...sources: string[]) =>
  `> Generated from ${sources.map((s) => `[${s}](../../${s})`).join(', ')} by \`npm run docs\`: do not edit this page; change its source and run that again.`;

/** One table cell: no line breaks, no unescaped pipes, and `<name>` outside code shown as text, not taken for HTML. */
const cell = (text: string) =>
  text
    .replace(/\s*\n\s*/g, ' ')
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\|/g, '\\|');

export const code = (text: string) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``);

export function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The text GitHub shows for a heading: inline markup and links reduced to their words. */
const headingText = (heading: string) =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 ? part.replace(/`/g, '') : part.replace(/<[^>]+>/g, '').replace(/[*]/g, '')))
    .join('');

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export const slug = (heading: string) =>
  headingText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** Every anchor a Markdown file offers: its headings' slugs (repeats get -1, -2, …) and explicit HTML ids. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutCode(markdown).split('\n')) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** The text with fenced code blocks blanked (line numbers kept), where neither headings nor links count. */
export function withoutCode(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence === undefined && m) fence = m[1];
      else if (fence !== undefined && m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.trim().slice(m[1].length)) fence = undefined;
      else if (fence === undefined) return line;
      return '';
    })
    .join('\n');
}

/** Prettier with the project's settings (prettier.config.js), as npm run format would leave the page. */
export async function prettyMarkdown(text: string, file: string): Promise<string> {
  const config = (await resolveConfig(file)) ?? {};
  return format(text, { ...config, parser: 'markdown', filepath: file });
}
