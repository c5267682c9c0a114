// Priority words of the assistant's grammar, in the languages chrono parses
// dates in (so one sentence reads in one language), plus language-free marks:
// "!!!", "!!", "!" as words of their own and p1..p4. Every language's words are
// looked for in every sentence: they barely collide, and mixed sentences
// ("Meeting morgen, urgent") are common.

export const PRIORITIES = ['low', 'normal', 'high', 'critical'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface Found {
  start: number;
  end: number;
  text: string;
}

export interface PriorityHit extends Found {
  value: Priority;
}

// phrases before single words: "low priority" must win over a bare "priority"
const WORDS: Record<Priority, string[]> = {
  critical: [
    'critical priority',
    'critical',
    'blocker',
    'showstopper',
    'kritisch',
    'höchste priorität',
    'critique',
    'bloquant',
    'crítico',
    'crítica',
    'critico',
    'critica',
    'bloqueante',
    'kritiek',
    '緊急',
  ],
  high: [
    'high priority',
    'urgent',
    'urgently',
    'asap',
    'a.s.a.p.',
    'important',
    'hohe priorität',
    'dringend',
    'wichtig',
    'eilig',
    'priorité haute',
    'haute priorité',
    'prioritaire',
    'alta prioridad',
    'prioridad alta',
    'urgente',
    'importante',
    'alta prioridade',
    'prioridade alta',
    'hoge prioriteit',
    'spoed',
    'belangrijk',
    '至急',
    '急ぎ',
  ],
  normal: ['normal priority', 'medium priority', 'normale priorität', 'priorité normale', 'prioridad normal', 'prioridade normal', 'normale prioriteit'],
  low: [
    'low priority',
    'no rush',
    'not urgent',
    'whenever',
    'someday',
    'niedrige priorität',
    'nicht dringend',
    'keine eile',
    'basse priorité',
    'priorité basse',
    'pas urgent',
    'baja prioridad',
    'prioridad baja',
    'sin prisa',
    'no urgente',
    'baixa prioridade',
    'prioridade baixa',
    'sem pressa',
    'lage prioriteit',
    'geen haast',
    'niet dringend',
  ],
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// one alternation, longest phrases first, between non-letters ("urgently" is no "urgent" + "ly")
const PHRASES = Object.entries(WORDS)
  .flatMap(([value, words]) => words.map((w) => ({ w, value: value as Priority })))
  .sort((a, b) => b.w.length - a.w.length);
const LEVEL_OF = new Map(PHRASES.map((p) => [p.w, p.value]));
const WORD_RE = new RegExp(`(?<![\\p{L}\\p{N}])(${PHRASES.map((p) => escape(p.w).replace(/ /g, '\\s+')).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
// "prio: high", "priority high", "Priorität hoch": a level word after a priority word
const LEVEL_WORDS: Record<string, Priority> = {
  low: 'low',
  niedrig: 'low',
  basse: 'low',
  baja: 'low',
  baixa: 'low',
  laag: 'low',
  normal: 'normal',
  medium: 'normal',
  normale: 'normal',
  high: 'high',
  hoch: 'high',
  haute: 'high',
  alta: 'high',
  hoog: 'high',
  critical: 'critical',
  kritisch: 'critical',
  critique: 'critical',
  crítica: 'critical',
};
const LABELLED_RE = new RegExp(`(?<![\\p{L}\\p{N}])(?:priority|prio|priorität|priorité|prioridad|prioridade|prioriteit)\\s*[:=]?\\s*(${Object.keys(LEVEL_WORDS).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
const MARKS_RE = /(?<!\S)(!{1,5}|[pP][1-4])(?!\S)/g;
const MARK_LEVEL: Record<string, Priority> = { p1: 'critical', p2: 'high', p3: 'normal', p4: 'low' };

const overlaps = (a: Found, b: Found) => a.start < b.end && b.start < a.end;

/** Every priority mention of `text`, in text order, none overlapping. */
export function findPriorities(text: string): PriorityHit[] {
  const hits: PriorityHit[] = [];
  const add = (h: PriorityHit) => {
    if (!hits.some((o) => overlaps(o, h))) hits.push(h);
  };
  for (const m of text.matchAll(LABELLED_RE)) add({ start: m.index, end: m.index + m[0].length, text: m[0], value: LEVEL_WORDS[m[1].toLowerCase()] });
  for (const m of text.matchAll(WORD_RE)) {
    const value = LEVEL_OF.get(m[1].toLowerCase().replace(/\s+/g, ' '));
    if (value) add({ start: m.index, end: m.index + m[0].length, text: m[0], value });
  }
  for (const m of text.matchAll(MARKS_RE)) {
    const mark = m[1].toLowerCase();
    const value = MARK_LEVEL[mark] ?? (mark.length >= 3 ? 'critical' : 'high');
    add({ start: m.index, end: m.index + m[0].length, text: m[0], value });
  }
  return hits.sort((a, b) => a.start - b.start);
}

/** The most urgent of the hits; "normal" without any. */
export function strongest(hits: PriorityHit[]): Priority {
  return hits.reduce<Priority>((best, h) => (PRIORITIES.indexOf(h.value) > PRIORITIES.indexOf(best) ? h.value : best), hits.length ? 'low' : 'normal');
}
