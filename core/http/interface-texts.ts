// Interface texts: every label a manifest gives (menu entries, entities,
// fields) and every string of the console is a key in a namespace (the
// module's id; "console" for the console's own) with a built-in English text.
// A tenant overrides or translates them in its Translation rows; a text is
// looked up tenant → built-in → key, in the language asked for, then in the
// tenant's default language, then in English (i18n.ts's languagePreference).
import { readFileSync } from 'node:fs';
import type { Kernel } from '../kernel.ts';
import { SYSTEM } from '../access/principal.ts';
import type { EntityHooks } from '../context/hooks.ts';
import { validationError } from '../context/module-context.ts';

const BUILT_IN_LANGUAGE = 'en';
const CONSOLE_NAMESPACE = 'console';
const CONSOLE_TEXTS: Record<string, string> = JSON.parse(readFileSync(new URL('../console/texts.en.json', import.meta.url), 'utf8'));

export type Texts = Map<string, Map<string, string>>;

/** namespace → key → built-in English text, from the manifests, the modules' texts files and the console. */
export function builtInTexts(kernel: Kernel): Texts {
  const texts: Texts = new Map([[CONSOLE_NAMESPACE, new Map(Object.entries(CONSOLE_TEXTS))]]);
  for (const { manifest: m, plugin } of kernel.modules) {
    const own = new Map<string, string>();
    for (const e of m.menu ?? []) own.set(menuKey(e.path), e.label);
    for (const e of m.entities ?? []) {
      if (e.label) own.set(entityKey(e.name), e.label);
      for (const [name, f] of Object.entries(e.fields)) if (f.label && !f.internal) own.set(fieldKey(e.name, name), f.label);
    }
    for (const [path, page] of Object.entries(plugin?.pages ?? {})) if (page.title) own.set(pageKey(path), page.title);
    if (plugin?.texts) for (const [key, text] of moduleTexts(m.id, plugin.texts)) own.set(key, text);
    texts.set(m.id, own);
  }
  return texts;
}

const MANIFEST_KEY = /^(menu|entity|field|page)\./;

/** A module's texts file: a JSON object of key → English text, its keys none of the manifest's. */
function moduleTexts(module: string, file: URL): [string, string][] {
  const where = `plugins/${module}'s texts (${file.pathname.split('/').slice(-2).join('/')})`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${where}: must be a JSON object of key → text`);
  const entries = Object.entries(parsed as Record<string, unknown>);
  for (const [key, text] of entries) {
    if (typeof text !== 'string' || !text) throw new Error(`${where}: "${key}" must be a non-empty string`);
    if (MANIFEST_KEY.test(key)) throw new Error(`${where}: "${key}" starts like the keys the manifest's labels get (menu., entity., field., page.)`);
  }
  return entries as [string, string][];
}

export const menuKey = (path: string) => `menu${path.replaceAll('/', '.')}`;
/** a module page's title (ConsolePage.title): /pm/projects/:id/board → page.pm.projects.:id.board */
export const pageKey = (path: string) => `page${path.replaceAll('/', '.')}`;
export const entityKey = (entity: string) => `entity.${entity}`;
export const fieldKey = (entity: string, field: string) => `field.${entity}.${field}`;

/**
 * The kernel's rule on every Translation write: a row names a namespace and one
 * of its keys, else it would be stored and never shown (a typo, a key renamed
 * since). Checked on create and on any change of namespace or key.
 */
export function translationKeyHooks(texts: Texts): EntityHooks {
  return {
    async beforeWrite(_ctx, { op, input, before }) {
      if (op === 'delete' || !input || (op !== 'create' && !('namespace' in input) && !('key' in input))) return;
      const namespace = input.namespace !== undefined ? input.namespace : before?.namespace;
      const key = input.key !== undefined ? input.key : before?.key;
      // a missing or mistyped value is the validation's to answer
      if (typeof namespace !== 'string' || typeof key !== 'string') return;
      const keys = texts.get(namespace);
      if (!keys) throw validationError([{ path: '/namespace', message: `"${namespace}" is no namespace of the interface texts (a module's id, or "console")` }]);
      if (!keys.has(key)) throw validationError([{ path: '/key', message: `"${key}" is no text key of namespace "${namespace}"` }]);
    },
  };
}

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
    this.builtIn = builtInTexts(kernel);
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
