// The offline parser's text analysis: what a sentence says about a task,
// without looking anything up. @names, #projects, priority words and dates are
// found (with their places in the text), and the title is what remains,
// tidied; so are the places where a cue names someone or a project without @
// or # (parse-names.ts). Resolving them to rows is parse-match.ts's work, and
// a name found in free text leaves the title too (titleWithout).
import { findDates, type DateHit, type DateLanguage } from './parse-dates.ts';
import { findPriorities, strongest, type Found, type Priority, type PriorityHit } from './parse-priority.ts';
import { nameSites, type NameSite } from './parse-names.ts';

/** The longest text the assistant reads (the title of a task holds 500). */
export const MAX_TEXT = 2000;

export interface Analysis {
  title: string;
  priority: Priority;
  priorities: PriorityHit[];
  /** the first date is the due date; others are left in the title and warned about */
  dates: DateHit[];
  mentions: Found[];
  tags: Found[];
  /** where a cue may name someone or a project in free text */
  sites: NameSite[];
  /** what leaves the title: the recognised parts with the words that tie them */
  cut: Cut[];
}

interface Cut {
  start: number;
  end: number;
}

// "@maria", "@maria.rossi", "@maria@example.com"; not the middle of an e-mail address
const MENTION_RE = /(?<![\p{L}\p{N}@._%+-])@([\p{L}\p{N}][\p{L}\p{N}._+-]*(?:@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)?)/gu;
// "#WEB", "#web-site"; not "C#" nor "#1" (an issue number stays in the title)
const TAG_RE = /(?<![\p{L}\p{N}#&])#(\p{L}[\p{L}\p{N}_-]*)/gu;

// words that only tie a recognised part to the sentence: dropped with it ("due tomorrow", "for @maria", "in #WEB")
const DATE_LEADS = ['due', 'by', 'on', 'at', 'until', 'till', 'before', 'fällig', 'bis', 'am', 'um', 'pour', 'le', 'avant', 'para', 'el', 'antes', 'até', 'em', 'voor', 'op', 'tegen', 'entro', 'il'];
const PERSON_LEADS = ['to', 'for', 'with', 'assign', 'an', 'für', 'mit', 'à', 'pour', 'avec', 'para', 'con', 'com', 'a', 'voor', 'aan', 'met', 'per'];
const PROJECT_LEADS = ['in', 'to', 'for', 'into', 'im', 'zu', 'dans', 'en', 'no', 'na', 'em'];

const trimTrailing = (s: string) => s.replace(/[.,;:!?\s]+$/u, '');

/** Where the lead word just before `start` begins (only single words separated by spaces), or `start`. */
function leadStart(text: string, start: number, leads: string[]): number {
  const m = /([\p{L}']+)\s+$/u.exec(text.slice(Math.max(0, start - 20), start));
  if (!m || !leads.includes(m[1].toLowerCase())) return start;
  return start - m[0].length;
}

/** The text without the given ranges, tidied: spaces collapsed, stray punctuation gone, first letter upper-case. */
export function titleWithout(text: string, cut: Cut[]): string {
  const sorted = [...cut].sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const r of sorted) {
    if (r.start < at) continue;
    out += text.slice(at, r.start) + ' ';
    at = r.end;
  }
  out += text.slice(at);
  const tidy = trimTrailing(
    out
      .replace(/\s+/gu, ' ')
      .replace(/\s+([,;:.!?])/gu, '$1')
      .replace(/([,;:])(?:\s*[,;:])+/gu, '$1')
      .replace(/^[\s,;:.!?-]+/u, ''),
  )
    .replace(/\s*[-–—]$/u, '')
    .trim();
  return tidy.charAt(0).toLocaleUpperCase() + tidy.slice(1);
}

/** Reads a sentence: its priority, dates, @names and #projects, and the title that remains. */
export function analyse(text: string, language: DateLanguage, reference: Date, timeZone: string): Analysis {
  const mentions: Found[] = [...text.matchAll(MENTION_RE)]
    .map((m) => ({ start: m.index, end: m.index + m[0].length, text: trimTrailing(m[1]) }))
    .map((f) => ({ ...f, end: f.start + 1 + f.text.length }));
  const tags: Found[] = [...text.matchAll(TAG_RE)].map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[1] }));
  const taken = [...mentions, ...tags];
  const free = (f: Found) => !taken.some((o) => f.start < o.end && o.start < f.end);
  const priorities = findPriorities(text).filter(free);
  taken.push(...priorities);
  // chrono's text may end in the sentence's punctuation ("Freitag,"): the span is the date alone
  const dates = findDates(text, language, reference, timeZone)
    .map((d) => ({ ...d, text: trimTrailing(d.text), end: d.start + trimTrailing(d.text).length }))
    .filter(free);
  const cut = [
    ...mentions.map((f) => ({ start: leadStart(text, f.start, PERSON_LEADS), end: f.end })),
    ...tags.map((f) => ({ start: leadStart(text, f.start, PROJECT_LEADS), end: f.end })),
    ...priorities,
    ...dates.slice(0, 1).map((f) => ({ start: leadStart(text, f.start, DATE_LEADS), end: f.end })),
  ];
  const sites = nameSites(text, [...taken, ...dates]);
  return { title: titleWithout(text, cut), priority: strongest(priorities), priorities, dates, mentions, tags, sites, cut };
}
