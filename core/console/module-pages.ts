// Pages a module draws itself (plugins/<module>/index.ts exports `pages`), at
// the web paths of its menu entries: the module's template gets what its
// load() read through the API as the user, and the console's layout around it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type handlebars from 'handlebars';
import type { Kernel } from '../kernel.ts';
import type { ConsolePage } from '../context/plugin-module.ts';
import type { ConsoleRenderer } from './entity-pages.ts';

interface ModulePage {
  module: string;
  path: string;
  label: string;
  page: ConsolePage;
}

/** Every page the modules export, each checked against its module's menu. */
export function modulePages(kernel: Kernel): ModulePage[] {
  return kernel.modules.flatMap(({ manifest, plugin }) =>
    Object.entries(plugin?.pages ?? {}).map(([path, page]) => {
      const entry = (manifest.menu ?? []).find((e) => e.path === path);
      if (!entry) throw new Error(`plugins/${manifest.id}/index.ts exports a console page for ${path}, which no menu entry of manifests/${manifest.id}.json names`);
      return { module: manifest.id, path, label: entry.label, page };
    }),
  );
}

export function registerModulePage(app: FastifyInstance, engine: typeof handlebars, { path, label, page }: ModulePage, ui: ConsoleRenderer): void {
  const template = engine.compile(readFileSync(fileURLToPath(page.view), 'utf8'), { strict: false });
  app.get(path, async (request, reply) => {
    const shell = await ui.load(request, reply);
    const data = await page.load(shell.api, request.query as Record<string, string | undefined>);
    return ui.render(reply, shell, 'module-page', { title: label, content: template(data) });
  });
}
