// Translatable fields store { language: text }. Responses carry one string per
// field, the best match for Accept-Language, falling back to the tenant default.
export type Translations = Record<string, string>;

const TAG = /^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$/;

/** Accept-Language → tags by descending quality ("*" and q=0 dropped). */
export function parseAcceptLanguage(header: string | undefined): string[] {
  if (!header) return [];
  const entries: { tag: string; q: number; i: number }[] = [];
  header
    .split(',')
    .slice(0, 20)
    .forEach((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      let q = 1;
      for (const p of params) {
        if (!/^\s*q\s*=/i.test(p)) continue;
        // RFC 9110 qvalue: 0..1, at most three decimals; a malformed weight drops the
        // entry rather than ranking it first
        const m = /^\s*q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/i.exec(p);
        q = m ? Number(m[1]) : 0;
      }
      const name = tag.trim();
      if (q > 0 && TAG.test(name)) entries.push({ tag: name.toLowerCase(), q, i });
    });
  return entries.sort((a, b) => b.q - a.q || a.i - b.i).map((e) => e.tag);
}

/** Candidate languages in order: each preferred tag, then its primary subtag, then the fallback. */
export function languagePreference(header: string | undefined, fallback: string): string[] {
  const out: string[] = [];
  for (const tag of parseAcceptLanguage(header)) {
    if (!out.includes(tag)) out.push(tag);
    const primary = tag.split('-')[0];
    if (!out.includes(primary)) out.push(primary);
  }
  if (!out.includes(fallback)) out.push(fallback);
  return out;
}

/** The value in the first preferred language present; else any language held. */
export function pick(value: Translations | null | undefined, prefs: string[]): { text: string | null; lang: string | null } {
  if (!value || typeof value !== 'object') return { text: null, lang: null };
  for (const lang of prefs) if (typeof value[lang] === 'string') return { text: value[lang], lang };
  const first = Object.keys(value).sort()[0];
  return first ? { text: value[first], lang: first } : { text: null, lang: null };
}

/** The language a plain-string write is stored under: Content-Language, else the default. */
export function writeLanguage(contentLanguage: string | undefined, fallback: string): string {
  const tag = contentLanguage?.split(',')[0].trim().toLowerCase();
  return tag && TAG.test(tag) ? tag : fallback;
}
