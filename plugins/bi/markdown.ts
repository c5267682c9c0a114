// The markdown of a text widget as blocks a logic-less template draws, never as
// HTML: headings, lists, paragraphs, and inline **bold**, *italics*, `code` and
// [links](https://…). Every text stays text (the template escapes it), and a
// link keeps only http(s) and same-site addresses.

export interface Inline {
  text: string;
  strong?: boolean;
  em?: boolean;
  code?: boolean;
  href?: string;
}

export interface Block {
  /** a heading's level for aria-level (below the widget's own h2) */
  heading?: number;
  list?: 'ul' | 'ol';
  ul?: boolean;
  items?: Inline[][];
  parts?: Inline[];
}

const INLINE = /\*\*([^*]+)\*\*|\*([^*]+)\*|`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)/g;
const SAFE_HREF = /^(https?:\/\/|\/(?!\/))/i;

function inline(text: string): Inline[] {
  const out: Inline[] = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push({ text: text.slice(last, m.index) });
    if (m[1]) out.push({ text: m[1], strong: true });
    else if (m[2]) out.push({ text: m[2], em: true });
    else if (m[3]) out.push({ text: m[3], code: true });
    else out.push(SAFE_HREF.test(m[5]) ? { text: m[4], href: m[5] } : { text: m[4] });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last) });
  return out;
}

const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const HEADING = /^(#{1,6})\s+(.*)$/;

export function markdownBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  // declared wide: flush() resets it from inside a closure, which narrowing does not see
  let list = null as Block | null;
  const flush = () => {
    if (paragraph.length) blocks.push({ parts: inline(paragraph.join(' ')) });
    paragraph = [];
    list = null;
  };
  for (const raw of source.replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.trimEnd();
    const heading = HEADING.exec(line);
    const bullet = BULLET.exec(line) ?? NUMBERED.exec(line);
    if (!line.trim()) flush();
    else if (heading) {
      flush();
      blocks.push({ heading: Math.min(6, heading[1].length + 2), parts: inline(heading[2]) });
    } else if (bullet) {
      const kind = BULLET.test(line) ? 'ul' : 'ol';
      if (paragraph.length || list?.list !== kind) flush();
      if (!list) blocks.push((list = { list: kind, ul: kind === 'ul', items: [] }));
      list.items!.push(inline(bullet[1]));
    } else if (list) list.items!.at(-1)!.push({ text: ` ${line.trim()}` });
    else paragraph.push(line.trim());
  }
  flush();
  return blocks;
}
