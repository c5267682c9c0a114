// Pages a module draws itself (plugins/<module>/index.ts exports `pages`), at
// the web paths of its menu entries: the module's template gets what its
// load() read through the API as the user, and the console's layout around it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type handlebars from 'handlebars';
import type { Kernel } from '../kernel.ts';
import type { ConsolePage, PageApi } from '../context/plugin-module.ts';
import { pageKey } from '../context/built-in-texts.ts';
import { fillIn } from './texts.ts';
import type { ConsoleRenderer } from './shell.ts';

export interface ModulePage {
  module: string;
  path: string;
  /** the menu entry's path it is, or is below */
  entry: string;
  title: string;
  page: ConsolePage;
}

const PATH = /^(\/([a-z0-9-]+|:[a-z][A-Za-z0-9]*))+$/;

/** Every page the modules export, each checked against its module's menu: at an entry's path, or below it. */
export function modulePages(kernel: Kernel): ModulePage[] {
  return kernel.modules.flatMap(({ manifest, plugin }) =>
    Object.entries(plugin?.pages ?? {}).map(([path, page]) => {
      // the entry it is, else the one it is deepest below (/ai/reports/history is an entry of its own, not a page of /ai/reports)
      const under = PATH.test(path) ? (manifest.menu ?? []).filter((e) => path === e.path || path.startsWith(`${e.path}/`)) : [];
      const entry = under.sort((a, b) => b.path.length - a.path.length)[0];
      if (!entry) throw new Error(`plugins/${manifest.id}/index.ts exports a console page for ${path}, which is no path of a menu entry of manifests/${manifest.id}.json, nor below one`);
      return { module: manifest.id, path, entry: entry.path, title: page.title ?? entry.label, page };
    }),
  );
}

export interface RowPage {
  module: string;
  /** in English, and its key in the module's texts */
  title: string;
  key: string;
  /** the path after the row's: /board */
  suffix: string;
}

/** The pages of one row below an entity's pages (<path>/:id/<name>), as links its detail page shows. */
export function rowPages(pages: ModulePage[], path: string): RowPage[] {
  const prefix = `${path}/:id/`;
  return pages
    .filter((p) => p.path.startsWith(prefix) && !p.path.slice(prefix.length).includes(':'))
    .map((p) => ({ module: p.module, title: p.title, key: pageKey(p.path), suffix: p.path.slice(prefix.length - 1) }));
}

export function registerModulePage(app: FastifyInstance, engine: typeof handlebars, { module, path, entry, title, page }: ModulePage, ui: ConsoleRenderer): void {
  const template = engine.compile(readFileSync(fileURLToPath(page.view), 'utf8'), { strict: false });
  app.get(path, async (request, reply) => {
    const shell = await ui.load(request, reply, module);
    const texts = shell.moduleTexts;
    const api: PageApi = {
      get: (url) => shell.api.get(url),
      text: (key, values, fallback) => (Object.hasOwn(texts, key) ? fillIn(texts[key], values) : (fallback ?? fillIn(key, values))),
    };
    const data = await page.load(api, request.query as Record<string, string | undefined>, request.params as Record<string, string>);
    // the view's {{t "key"}} finds the module's texts as @texts
    // a page's own title is a text of its module; else it is its menu entry's label, translated in the menu
    const heading = page.title ? (texts[pageKey(path)] ?? title) : (shell.meta.menu.find((e) => e.path === entry)?.label ?? title);
    return ui.render(reply, shell, 'module-page', { title: heading, content: template(data, { data: { texts } }) });
  });
}
