// Interface texts: every label a manifest gives (menu entries, entities,
// fields) and every string of the console is a key in a namespace (the
// module's id; "console" for the console's own) with a built-in English text
// (context/built-in-texts.ts). A tenant overrides or translates them in its
// Translation rows; a text is looked up tenant → built-in → key, in the
// language asked for, then in the tenant's default language, then in English
// (i18n.ts's languagePreference).
import type { Kernel } from '../kernel.ts';
import { SYSTEM } from '../access/principal.ts';
import { builtInTexts, type Texts } from '../context/built-in-texts.ts';

const BUILT_IN_LANGUAGE = 'en';

interface Override {
  language: string;
  namespace: string;
  key: string;
  text: string;
}

/** A tenant's texts, read once per change of its Translation rows (the data layer's generations say when). */
export class InterfaceTexts {
  readonly builtIn: Texts;
  readonly #kernel: Kernel;
  readonly #cache = new Map<string, { stamp: string; rows: Override[] }>();

  constructor(kernel: Kernel) {
    this.#kernel = kernel;
    this.builtIn = builtInTexts(kernel.modules);
  }

  /** Every override of the tenant, read as the system: the texts of the interface are no one's secret. */
  async overrides(tenantId: string): Promise<Override[]> {
    const table = this.#kernel.model('Translation').table;
    const stamp = this.#kernel.changes.stamp(tenantId, [table]);
    const hit = this.#cache.get(tenantId);
    if (hit && hit.stamp === stamp) return hit.rows;
    const ctx = await this.#kernel.contextFor({ tenant: tenantId, principal: SYSTEM });
    const rows = (await ctx.data('Translation').find({}, { limit: 100_000 })) as unknown as Override[];
    // bounded like the tenants it serves: one entry per tenant, dropped oldest first
    if (this.#cache.size >= this.#kernel.config.tenantCacheSize) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(tenantId, { stamp, rows });
    return rows;
  }

  /** namespace → key → text, each from the first language of `prefs` (then English) that the tenant or the built-in texts have. */
  async catalog(tenantId: string, prefs: string[], namespaces?: string[]): Promise<Record<string, Record<string, string>>> {
    const rows = await this.overrides(tenantId);
    const order = [...new Set([...prefs, BUILT_IN_LANGUAGE])];
    const byLanguage = new Map<string, Map<string, string>>();
    for (const r of rows) {
      const key = `${r.namespace}\u0000${r.key}`;
      if (!byLanguage.has(r.language)) byLanguage.set(r.language, new Map());
      byLanguage.get(r.language)!.set(key, r.text);
    }
    const out: Record<string, Record<string, string>> = {};
    for (const [ns, keys] of this.builtIn) {
      if (namespaces && !namespaces.includes(ns)) continue;
      const texts: Record<string, string> = {};
      for (const [key, english] of keys) {
        let text: string | undefined;
        for (const lang of order) {
          text = byLanguage.get(lang)?.get(`${ns}\u0000${key}`) ?? (lang === BUILT_IN_LANGUAGE ? english : undefined);
          if (text !== undefined) break;
        }
        texts[key] = text ?? key;
      }
      out[ns] = texts;
    }
    return out;
  }

  /** Per namespace, the built-in keys the tenant has no text for in `language` (English is complete by construction). */
  async missing(tenantId: string, language: string): Promise<{ namespace: string; total: number; translated: number; missing: { key: string; text: string }[] }[]> {
    const rows = await this.overrides(tenantId);
    const have = new Set(rows.filter((r) => r.language === language).map((r) => `${r.namespace}\u0000${r.key}`));
    return [...this.builtIn].map(([namespace, keys]) => {
      const missing = language === BUILT_IN_LANGUAGE ? [] : [...keys].filter(([key]) => !have.has(`${namespace}\u0000${key}`)).map(([key, text]) => ({ key, text }));
      return { namespace, total: keys.size, translated: keys.size - missing.length, missing };
    });
  }

  /** The languages the tenant has texts in, with the built-in one. */
  async languages(tenantId: string): Promise<string[]> {
    const rows = await this.overrides(tenantId);
    return [...new Set([BUILT_IN_LANGUAGE, ...rows.map((r) => r.language)])].sort();
  }
}
