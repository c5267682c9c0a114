// A schedule's cron expression in words, and the presets a form picks it from:
// none (on demand), daily, weekly or monthly at a time, or a cron of one's own.
// Only the presets' own patterns are read; any other cron shows as written,
// since a cron parser of our own would say some of them wrong. It imports
// nothing, so a lower layer (and through core/plugin-api.ts a module's pages)
// could have it too.

/** A text by key with its placeholders filled in (texts.ts's Say, or a module page's api.text). */
type Say = (key: string, values?: Record<string, string | number>) => string;

export type Preset = 'none' | 'daily' | 'weekly' | 'monthly' | 'custom';
export const PRESETS: readonly Preset[] = ['none', 'daily', 'weekly', 'monthly', 'custom'];

export interface Schedule {
  preset: Preset;
  /** "08:00" */
  time: string;
  /** 0 Sunday … 6 Saturday, as cron counts */
  weekday: number;
  /** 1 … 31 */
  monthday: number;
  /** the expression itself (custom, or what the presets stand for) */
  cron: string;
}

const NUMBER = /^\d{1,2}$/;
const pad = (n: number) => String(n).padStart(2, '0');

/** The preset a cron expression is, with its time and day; anything else is custom. */
export function presetOf(cron: string | null | undefined): Schedule {
  const base: Schedule = { preset: 'none', time: '08:00', weekday: 1, monthday: 1, cron: '' };
  const text = (cron ?? '').trim();
  if (!text) return base;
  const parts = text.split(/\s+/);
  const custom = { ...base, preset: 'custom' as const, cron: text };
  if (parts.length !== 5 || !NUMBER.test(parts[0]) || !NUMBER.test(parts[1]) || parts[3] !== '*') return custom;
  const [minute, hour, dom, , dow] = parts;
  if (Number(minute) > 59 || Number(hour) > 23) return custom;
  const time = `${pad(Number(hour))}:${pad(Number(minute))}`;
  if (dom === '*' && dow === '*') return { ...base, preset: 'daily', time, cron: text };
  // cron counts Sunday as 0 or 7
  if (dom === '*' && /^[0-7]$/.test(dow)) return { ...base, preset: 'weekly', time, weekday: Number(dow) % 7, cron: text };
  if (dow === '*' && NUMBER.test(dom) && Number(dom) >= 1 && Number(dom) <= 31) return { ...base, preset: 'monthly', time, monthday: Number(dom), cron: text };
  return custom;
}

/** A schedule in words: "every Monday at 08:00"; a cron no preset is shows as written. */
export function cronWords(cron: string | null | undefined, say: Say): string {
  const s = presetOf(cron);
  switch (s.preset) {
    case 'none':
      return say('cron.onDemand');
    case 'daily':
      return say('cron.daily', { time: s.time });
    case 'weekly':
      return say('cron.weekly', { day: say(`cron.day.${s.weekday}`), time: s.time });
    case 'monthly':
      return say('cron.monthly', { day: s.monthday, time: s.time });
    default:
      return s.cron;
  }
}

/** The form's names of a schedule field's inputs; the custom cron keeps the field's own name. */
export const scheduleInputs = (field: string) => ({ preset: `${field}:preset`, time: `${field}:time`, weekday: `${field}:weekday`, monthday: `${field}:monthday`, cron: field });

/**
 * The cron expression the schedule inputs stand for ('' for none), or the key of
 * what is wrong with them.
 */
export function cronOfInputs(values: { preset?: string; time?: string; weekday?: string; monthday?: string; cron?: string }): { cron: string } | { error: string } {
  const preset = (values.preset ?? '') as Preset;
  if (!PRESETS.includes(preset)) return { cron: (values.cron ?? '').trim() };
  if (preset === 'none') return { cron: '' };
  if (preset === 'custom') return (values.cron ?? '').trim() ? { cron: (values.cron ?? '').trim() } : { error: 'cron.customMissing' };
  const time = /^(\d{1,2}):(\d\d)$/.exec((values.time ?? '').trim());
  if (!time || Number(time[1]) > 23 || Number(time[2]) > 59) return { error: 'cron.badTime' };
  const at = `${Number(time[2])} ${Number(time[1])}`;
  if (preset === 'daily') return { cron: `${at} * * *` };
  if (preset === 'weekly') {
    const day = (values.weekday ?? '').trim();
    return /^[0-6]$/.test(day) ? { cron: `${at} * * ${day}` } : { error: 'cron.badWeekday' };
  }
  const day = (values.monthday ?? '').trim();
  return /^\d{1,2}$/.test(day) && Number(day) >= 1 && Number(day) <= 31 ? { cron: `${at} ${Number(day)} * *` } : { error: 'cron.badMonthday' };
}
