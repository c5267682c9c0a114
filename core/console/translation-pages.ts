// The Translations page of a module (a menu entry with "page": "translations"):
// the module's interface texts beside their built-in English, in a language
// the user picks or adds, with what is still missing counted. Saving writes
// Translation rows through the API, so the user's grants decide which
// namespaces they may change (a PM administrator: "pm" only).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleRenderer } from './shell.ts';
import type { FormData } from './fields.ts';
import type { Page } from './shell.ts';

interface Override {
  id: string;
  version: number;
  key: string;
  text: string;
}
interface Missing {
  namespaces: { namespace: string; total: number; translated: number; missing: { key: string; text: string }[] }[];
}
interface Catalog {
  languages: string[];
}

const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : (v ?? ''));

export function registerTranslationPage(app: FastifyInstance, entry: { path: string; module: string }, ui: ConsoleRenderer, languages: string[]): void {
  const { path } = entry;
  const stateOf = (request: FastifyRequest) => {
    const q = request.query as Record<string, string | undefined>;
    const language = LANGUAGE.test(q.language ?? '') ? q.language! : (languages.find((l) => l !== 'en') ?? 'en');
    const namespace = /^[a-z][a-z0-9-]*$/.test(q.namespace ?? '') ? q.namespace! : entry.module;
    return { language, namespace };
  };

  /** The stored texts of one namespace and language, by key (the API pages them: a namespace holds a few hundred keys). */
  const overrides = async (page: Page, language: string, namespace: string): Promise<Map<string, Override> | null> => {
    const out = new Map<string, Override>();
    for (let n = 1; n <= 20; n++) {
      const res = await page.api.get<{ items: Override[]; total: number }>(`/api/translations?${new URLSearchParams({ language, namespace, size: '1000', page: String(n) })}`);
      if (!res.ok) return null;
      for (const r of res.body.items) out.set(r.key, r);
      if (n * 1000 >= res.body.total) break;
    }
    return out;
  };

  app.get(path, async (request, reply) => {
    const page = await ui.load(request, reply);
    const { language, namespace } = stateOf(request);
    const [missing, catalog, stored] = await Promise.all([
      page.api.get<Missing>(`/api/translations/missing?language=${encodeURIComponent(language)}`),
      page.api.get<Catalog>('/api/translations/catalog?namespaces=console'),
      overrides(page, language, namespace),
    ]);
    const report = missing.ok ? missing.body.namespaces : [];
    const mine = report.find((n) => n.namespace === namespace);
    if (!mine || !stored) return ui.render(reply, page, 'problem', { title: page.text('translations.title'), problem: { status: 404, title: page.text('translations.none') }, back: '/' }, 404);
    const builtIn = await page.api.get<{ texts: Record<string, Record<string, string>> }>(`/api/translations/catalog?language=en&namespaces=${namespace}`);
    const keys = Object.entries(builtIn.ok ? (builtIn.body.texts[namespace] ?? {}) : {});
    const known = new Set([...languages, ...(catalog.ok ? catalog.body.languages : []), language]);
    const query = (request.query as Record<string, string | undefined>) ?? {};
    return ui.render(reply, page, 'translations', {
      title: page.meta.menu.find((m) => m.path === path)?.label ?? page.text('translations.title'),
      path,
      language,
      namespace,
      saved: query.notice === 'saved',
      languages: [...known].sort().map((l) => ({ code: l, selected: l === language })),
      namespaces: report.map((n) => ({ name: n.namespace, selected: n.namespace === namespace, missing: n.total - n.translated })),
      missingCount: mine.total - mine.translated,
      rows: keys.map(([key, english], i) => ({ key, english, id: `text-${i}`, value: stored.get(key)?.text ?? '', missing: !stored.has(key) })),
    });
  });

  app.post(path, { preHandler: app.csrfProtection }, async (request, reply) => {
    const page = await ui.load(request, reply);
    const form = (request.body ?? {}) as FormData;
    const language = one(form.language);
    const namespace = one(form.namespace);
    if (!LANGUAGE.test(language) || !/^[a-z][a-z0-9-]*$/.test(namespace)) throw Object.assign(new Error('a language and a namespace are needed'), { statusCode: 400 });
    const stored = await overrides(page, language, namespace);
    if (!stored) return ui.render(reply, page, 'problem', { title: page.text('translations.title'), problem: { status: 403, title: page.text('translations.forbidden') }, back: path }, 403);
    const keys = [form.key ?? []].flat();
    const values = [form.text ?? []].flat();
    const failures: string[] = [];
    for (const [i, key] of keys.entries()) {
      const text = (values[i] ?? '').trim();
      const current = stored.get(key);
      if ((current?.text ?? '') === text) continue;
      const res = !text
        ? await page.api.call('DELETE', `/api/translations/${current!.id}`, undefined, { 'if-match': `"${current!.version}"` })
        : current
          ? await page.api.call('PATCH', `/api/translations/${current.id}`, { text }, { 'if-match': `"${current.version}"` })
          : await page.api.call('POST', '/api/translations', { language, namespace, key, text });
      if (!res.ok) failures.push(`${key}: ${(res.body as { title?: string; detail?: string }).detail ?? (res.body as { title?: string }).title ?? res.status}`);
    }
    if (failures.length)
      return ui.render(
        reply,
        page,
        'problem',
        {
          title: page.text('translations.title'),
          problem: { status: 400, title: page.text('translations.notSaved'), detail: failures.slice(0, 20).join('; ') },
          back: `${path}?${new URLSearchParams({ language, namespace })}`,
        },
        400,
      );
    return reply.redirect(`${path}?${new URLSearchParams({ language, namespace, notice: 'saved' })}`, 303);
  });
}
