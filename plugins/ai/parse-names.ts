// People and projects named in free text, without @ or #, in English, German,
// French and Spanish: "remind Anna to …", "assign to Tom: …", "Maria should
// …", "with Aiko", "for the Field service app", "im Projekt Mobile app". A cue
// ties a name to the sentence; the words after it count as a name only when
// they are exactly (case and accents aside) the first name, full name or
// e-mail local part of an active user the caller may read, or the name or key
// (as typed, upper case) of one of the caller's projects. So "with the team"
// is no one and says nothing, and no typo is guessed at: that is what @ and #
// are for. Several exact matches are ambiguous, as with @ and #. The cue, the
// name and what ties it ("to", "should", ":") leave the title together; a name
// without a cue ("call Maria") is whom the task is about and stays.
//
// nameSites() reads the text alone (deterministic, no lookups); findNames()
// looks the words up as the caller, a bounded search per distinct first word.
import type { ModuleContext } from '../../core/plugin-api.ts';
import type { Found } from './parse-priority.ts';
import { fold, namedCandidates, userNames, type ProjectRef, type Resolution, type UserRef } from './parse-match.ts';

export interface NameSite {
  kind: 'person' | 'project';
  /** where the cue begins: the title loses [cutStart, the end of the name and its tail) */
  cutStart: number;
  /** the words that may be the name, from the first (at most MAX_WORDS) */
  words: Found[];
  /** what follows the name (sticky); with `tailRequired`, the name counts only when it does */
  tail: RegExp | null;
  tailRequired: boolean;
}

export interface NameHit<T> extends Found {
  cutStart: number;
  cutEnd: number;
  resolution: Resolution<T>;
}

const MAX_WORDS = { person: 4, project: 6 };
/** distinct words looked up per kind, and places read, per sentence */
const MAX_TERMS = 10;
const MAX_SITES = 60;
const ALTERNATIVES = 5;

const B = '(?<![\\p{L}\\p{N}])';
const E = '(?![\\p{L}\\p{N}])';
/** "a|b c" → an alternation, any whitespace between a phrase's words */
const alt = (words: string) => words.replace(/ /g, '\\s+');
const lead = (words: string) => new RegExp(`${B}(?:${alt(words)})\\s+`, 'giu');
const sticky = (source: string) => new RegExp(source, 'iuy');

interface Cue {
  lead: RegExp;
  /** what follows the name (sticky, cut with it); `required`: the name counts only when it does */
  tail: RegExp | null;
  required: boolean;
}

// who does it, by language: remind Anna to …; assign to Tom: …; with Aiko, for Tom
const PERSON_CUES: Cue[] = [
  { lead: lead('remind|ask'), tail: sticky(`\\s+(?:to|that)${E}`), required: true },
  { lead: lead('erinnere|erinnern sie|bitte'), tail: sticky('(?:\\s+daran)?\\s*,'), required: true },
  { lead: lead('rappeler à|rappelle à|rappelez à|demander à|demande à|demandez à'), tail: sticky("\\s+(?:de|d['’])"), required: true },
  { lead: lead('recordar a|recordarle a|recuérdale a|recuerda a|pedir a|pedirle a|pídele a|pide a'), tail: sticky(`\\s+(?:que|de)${E}`), required: true },
  {
    lead: lead('assign to|assign|assigned to|delegate to|zuweisen an|zuordnen an|zugewiesen an|assigner à|attribuer à|confier à|assigné à|asignar a|asignarle a|asígnale a|asignado a|asignada a'),
    tail: sticky('\\s*[:,]'),
    required: false,
  },
  { lead: lead('with|for|mit|für|avec|pour|con|para'), tail: null, required: false },
];
// Maria should …, at the start of a clause ("Tom: …" too)
const SUBJECT_TAIL = sticky(
  `\\s*:|\\s+(?:${alt('should|must|needs to|has to|will|shall|can|is to|soll|sollte|muss|kann|wird|doit|devrait|va|peut|debe|debería|tiene que|tendrá que|va a|puede')})${E}`,
);
// where it belongs: in / for (the) (project) …, or "project …"
const ARTICLES = 'the|der|die|das|den|dem|des|le|la|les|el|los|las';
const PROJECT_WORDS = 'project|projekt|projet|proyecto';
const PROJECT_CUE = new RegExp(
  `${B}(?:(?:${alt('in|into|for|to|under|im|ins|für|zum|zur|zu|dans|pour|au|du|en|para|del|al')})\\s+(?:(?:${ARTICLES})\\s+|l['’])?(?:(?:${PROJECT_WORDS})\\s+)?|(?:${PROJECT_WORDS})\\s+)`,
  'giu',
);
const PROJECT_TAIL = sticky(`\\s+(?:${PROJECT_WORDS})${E}`);
// words a name does not start with: articles and pronouns ("remind me to", "for the team")
const NOT_A_NAME = new Set(`${ARTICLES}|a|an|o|os|as|me|him|her|them|us|you|it|this|that|everyone|mich|mir|ihn|ihm|sie|uns|moi|lui|eux|nous|vous|mí|él|ella|todos`.split('|'));

const WORD = /[\p{L}\p{N}](?:[\p{L}\p{N}'’._+-]*[\p{L}\p{N}])?(?:@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+)?/uy;
const GAP = /[ \t]+/y;
const WORD_START = /(?<![\p{L}\p{N}'’._+@-])[\p{L}\p{N}]/gu;

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;

/** Up to `max` words from `at`, one space or tab apart, none inside what is taken already. */
function wordsAt(text: string, at: number, max: number, taken: Found[]): Found[] {
  const out: Found[] = [];
  let pos = at;
  while (out.length < max) {
    WORD.lastIndex = pos;
    const m = WORD.exec(text);
    if (!m) break;
    const w = { start: pos, end: pos + m[0].length, text: m[0] };
    if (taken.some((t) => overlaps(t, w))) break;
    out.push(w);
    GAP.lastIndex = w.end;
    if (!GAP.exec(text)) break;
    pos = GAP.lastIndex;
  }
  return out;
}

/** The end of `tail` right at `at`, or -1. */
function tailEnd(text: string, tail: RegExp, at: number): number {
  tail.lastIndex = at;
  const m = tail.exec(text);
  return m ? at + m[0].length : -1;
}

/** Where a clause begins: at the start, or after punctuation, once what is taken (a date, a priority) is set aside. */
function clauseStarts(text: string, taken: Found[]): number[] {
  let bare = text;
  for (const t of taken) bare = bare.slice(0, t.start) + ' '.repeat(t.end - t.start) + bare.slice(t.end);
  return [...bare.matchAll(WORD_START)].map((m) => m.index).filter((i) => /(?:^|[.;:!?,–—])$/u.test(bare.slice(0, i).trimEnd()));
}

/** Every place in `text` where a cue says a person or a project is named, outside what is `taken`, in text order. */
export function nameSites(text: string, taken: Found[]): NameSite[] {
  const sites: NameSite[] = [];
  const free = (at: number, end: number) => !taken.some((t) => overlaps(t, { start: at, end }));
  const add = (kind: NameSite['kind'], cutStart: number, at: number, tail: RegExp | null, tailRequired: boolean) => {
    const words = wordsAt(text, at, MAX_WORDS[kind], taken);
    if (!words.length || NOT_A_NAME.has(words[0].text.toLowerCase()) || words[0].text.length < 2) return;
    // a required tail must follow one of the word runs, else nothing here can be a name (and nothing is looked up)
    if (tailRequired && !words.some((w) => tail !== null && tailEnd(text, tail, w.end) >= 0)) return;
    sites.push({ kind, cutStart, words, tail, tailRequired });
  };
  for (const cue of PERSON_CUES) for (const m of text.matchAll(cue.lead)) if (free(m.index, m.index + m[0].length)) add('person', m.index, m.index + m[0].length, cue.tail, cue.required);
  for (const at of clauseStarts(text, taken)) add('person', at, at, SUBJECT_TAIL, true);
  for (const m of text.matchAll(PROJECT_CUE)) if (free(m.index, m.index + m[0].length)) add('project', m.index, m.index + m[0].length, PROJECT_TAIL, false);
  return sites.sort((a, b) => a.cutStart - b.cutStart).slice(0, MAX_SITES);
}

const decide = <T>(matches: T[]): Resolution<T> =>
  matches.length === 1 ? { status: 'matched', match: matches[0], alternatives: [] } : { status: 'ambiguous', match: null, alternatives: matches.slice(0, ALTERNATIVES) };

/** Candidates by each name that names them exactly: folded, and `#KEY` for a project key as typed. */
function byName<T>(items: T[], names: (t: T) => string[]): Map<string, T[]> {
  const index = new Map<string, T[]>();
  for (const item of items) for (const name of new Set(names(item))) index.set(name, [...(index.get(name) ?? []), item]);
  return index;
}

/** The longest run of the site's words (followed by its tail, when required) that names one or more candidates. */
function longest<T>(text: string, site: NameSite, index: Map<string, T[]>): NameHit<T> | null {
  for (let n = site.words.length; n > 0; n--) {
    const start = site.words[0].start;
    const end = site.words[n - 1].end;
    const after = site.tail ? tailEnd(text, site.tail, end) : -1;
    if (site.tailRequired && after < 0) continue;
    const name = text.slice(start, end);
    const matches = [...new Set([...(index.get(fold(name)) ?? []), ...(index.get(`#${name}`) ?? [])])];
    if (matches.length) return { start, end, text: name, cutStart: site.cutStart, cutEnd: Math.max(end, after), resolution: decide(matches) };
  }
  return null;
}

/**
 * The sites whose words name someone or some project the caller may read, the
 * longest name of each, in text order and not overlapping (the first wins).
 */
export async function findNames(ctx: ModuleContext, text: string, sites: NameSite[]): Promise<{ people: NameHit<UserRef>[]; projects: NameHit<ProjectRef>[] }> {
  const terms = (kind: NameSite['kind']) => [...new Set(sites.filter((s) => s.kind === kind).map((s) => s.words[0].text))].slice(0, MAX_TERMS);
  const { users, projects } = await namedCandidates(ctx, { person: terms('person'), project: terms('project') });
  const whom = byName(users, userNames);
  const where = byName(projects, (p) => [`#${p.key}`, fold(p.name)]);
  const people: NameHit<UserRef>[] = [];
  const places: NameHit<ProjectRef>[] = [];
  for (const site of sites) {
    if (site.kind === 'person') people.push(...[longest(text, site, whom)].filter((h) => h !== null));
    else places.push(...[longest(text, site, where)].filter((h) => h !== null));
  }
  const kept: Found[] = [];
  for (const h of [...people, ...places].sort((a, b) => a.start - b.start || a.cutStart - b.cutStart)) if (!kept.some((k) => overlaps(k, h))) kept.push(h);
  const keep = <T>(hits: NameHit<T>[]) => hits.filter((h) => kept.includes(h)).sort((a, b) => a.start - b.start);
  return { people: keep(people), projects: keep(places) };
}
