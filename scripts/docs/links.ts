// The link check of npm run docs:check, over README.md and docs/**/*.md: a relative
// link must name a file or directory of the repository, and its #anchor, into a
// Markdown file, a heading of that file (GitHub's slugs) or an HTML id in it.
// Inline links and images, reference definitions, autolinks and <a href>/<img src>.
// http(s) links are only parsed, never fetched: the check runs without a network.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { anchorsOf, ROOT, withoutCode } from './markdown.ts';

/** The Markdown files whose links are checked, relative to the root. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f));
  return ['README.md', ...docs.sort()];
}

/** Each link's target with its line; code spans and blocks skipped. */
function linksIn(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  withoutCode(markdown)
    .split('\n')
    .forEach((text, i) => {
      const line = text.replace(/(`+)[^`]*?\1/g, '');
      const targets = [
        ...[...line.matchAll(/\]\(\s*<([^>]*)>/g)].map((m) => m[1]),
        ...[...line.matchAll(/\]\(\s*([^\s<)][^\s)]*(?:\([^\s)]*\)[^\s)]*)*)/g)].map((m) => m[1]),
        ...[...line.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)/g)].map((m) => m[1]),
        ...[...line.matchAll(/<((?:https?|mailto):[^\s>]+)>/g)].map((m) => m[1]),
        ...[...line.matchAll(/<(?:a|img)\s[^>]*?\b(?:href|src)="([^"]+)"/g)].map((m) => m[1]),
      ];
      for (const target of targets) links.push({ target, line: i + 1 });
    });
  return links;
}

const anchorCache = new Map<string, Set<string>>();
const anchorsIn = (file: string) => anchorCache.get(file) ?? anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8'))).get(file)!;

/** Why a link of `file` leads nowhere, or undefined when it resolves. */
function problemOf(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (!/^https?:/i.test(target)) return undefined;
    try {
      new URL(target);
      return undefined;
    } catch {
      return 'is not a valid URL';
    }
  }
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return 'is not a valid path';
  }
  const resolved = !decoded ? join(ROOT, file) : decoded.startsWith('/') ? join(ROOT, decoded) : join(ROOT, dirname(file), decoded);
  if (!resolved.startsWith(ROOT)) return 'leads out of the repository';
  if (!existsSync(resolved)) return `names ${relative(ROOT, resolved)}, which does not exist`;
  if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) return undefined;
  return anchorsIn(resolved).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `names #${anchor}, which no heading of ${relative(ROOT, resolved) || file} makes`;
}

/** Every broken link, as "file:line: link … (what to fix)". */
export function brokenLinks(): string[] {
  const broken: string[] = [];
  for (const file of markdownFiles()) {
    for (const { target, line } of linksIn(readFileSync(join(ROOT, file), 'utf8'))) {
      const problem = problemOf(file, target);
      if (problem) broken.push(`${file}:${line}: link ${target} ${problem}: fix the link or its target`);
    }
  }
  return broken;
}
