// The web console: server-rendered handlebars pages with htmx for partial
// updates, served from the installed packages (no bundler, no CDN). It is a
// client of the API (api-client.ts); its own routes live in one encapsulated
// plugin, so the form parser, cookies and CSRF checks never reach the API,
// which stays JSON with bearer tokens.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import view from '@fastify/view';
import fastifyStatic from '@fastify/static';
import handlebars from 'handlebars';
import type { Kernel } from '../kernel.ts';
import { LoginRequired } from './api-client.ts';
import { loadPage, PageForbidden, type ConsoleRenderer, type ConsoleSite, type Page } from './shell.ts';
import { registerEntityPages } from './entity-pages.ts';
import { registerSessionPages } from './login-pages.ts';
import { modulePages, registerModulePage, rowPages } from './module-pages.ts';
import { registerApiRelay } from './api-relay.ts';
import { registerTranslationPage } from './translation-pages.ts';
import { CONSOLE_TEXTS, fillIn, sayFrom } from './texts.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const VIEWS = join(HERE, 'views');
/** The folder of an installed package: from its resolved entry file up to its package.json. */
function packageDir(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name) dir = dirname(dir);
  return dir;
}

/** Browser files served from installed packages, by URL under /console/vendor/. */
const VENDOR: Record<string, { pkg: string; dir: string; files: string[] }> = {
  htmx: { pkg: 'htmx.org', dir: 'dist', files: ['htmx.min.js'] },
  echarts: { pkg: 'echarts', dir: 'dist', files: ['echarts.min.js'] },
  gridstack: { pkg: 'gridstack', dir: 'dist', files: ['gridstack-all.js', 'gridstack.min.css'] },
};

const LAYOUT = { layout: 'layout.hbs' };

/** Form posts are small: the largest is an entity form. */
const FORM_LIMIT = 256 * 1024;

export async function installConsole(app: FastifyInstance, kernel: Kernel): Promise<void> {
  const languages = kernel.config.consoleLanguages;
  const entries = kernel.services.menu.filter((e): e is typeof e & { entity: string } => e.entity !== null);
  const pages = modulePages(kernel);
  // menu paths a module draws itself (pages below a path, with parameters, are not menu entries)
  const translationPages = kernel.services.menu.filter((e) => e.page === 'translations');
  const special = new Set([...pages.filter((p) => p.path === p.entry).map((p) => p.path), ...translationPages.map((e) => e.path)]);
  const site: ConsoleSite = { special, menu: kernel.services.menu, languages };
  const engine = viewEngine();

  await app.register(async (scope) => {
    // pages, not API operations: out of the OpenAPI document
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: FORM_LIMIT });
    await scope.register(csrf, { sessionPlugin: '@fastify/cookie', cookieKey: 'plinth_csrf', cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true } });
    // compiled once and kept: the views are part of the release
    await scope.register(view, { engine: { handlebars: engine }, root: VIEWS, viewExt: 'hbs', production: true });
    await scope.register(fastifyStatic, { root: join(HERE, 'assets'), prefix: '/console/assets/', index: false, maxAge: '1h' });
    for (const [name, { pkg, dir, files }] of Object.entries(VENDOR)) {
      const allowed = new Set(files.map((f) => `/${f}`));
      await scope.register(fastifyStatic, {
        root: join(packageDir(pkg), dir),
        prefix: `/console/vendor/${name}/`,
        decorateReply: false,
        index: false,
        maxAge: '1d',
        allowedPath: (p) => allowed.has(p),
      });
    }
    // a module's own browser files (plugins/<module>/assets/), for the pages it draws
    for (const { manifest } of kernel.modules) {
      const root = join(kernel.config.pluginsDir, manifest.id, 'assets');
      if (existsSync(root)) await scope.register(fastifyStatic, { root, prefix: `/console/modules/${manifest.id}/`, decorateReply: false, index: false, maxAge: '1h' });
    }

    const ui: ConsoleRenderer = {
      load: (request, reply, module) => loadPage(scope, request, reply, site, module),
      render: (reply, page, name, data, status = 200) =>
        reply
          .code(status)
          .header('cache-control', 'no-store')
          .view(name, { ...data, shell: page.shell }, LAYOUT),
    };
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (!(error instanceof PageForbidden)) return renderError(error, request, reply);
      const { page } = error;
      const problem = { status: 403, title: page.text('error.fullAccess'), detail: page.text('home.askAdmin') };
      return ui.render(reply, page, 'problem', { title: page.text('error.forbidden'), problem, back: page.shell.firstPath }, 403);
    });

    registerSessionPages(scope, kernel);
    registerApiRelay(scope);
    for (const entry of entries) if (!special.has(entry.path)) registerEntityPages(scope, { ...entry, rowPages: rowPages(pages, entry.path) }, ui);
    for (const page of pages) registerModulePage(scope, engine, page, ui);
    for (const entry of translationPages) registerTranslationPage(scope, entry, ui, languages);
    scope.get('/', async (request, reply) => {
      const page: Page = await ui.load(request, reply);
      const first = page.shell.firstPath as string | null;
      if (first) return reply.redirect(first, 303);
      return ui.render(reply, page, 'problem', {
        title: page.text('home.nothing'),
        problem: { status: 200, title: page.text('home.noPage'), detail: page.text('home.askAdmin') },
      });
    });
  });
}

function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof LoginRequired) {
    const next = request.method === 'GET' && request.url !== '/' ? `?next=${encodeURIComponent(request.url)}` : '';
    return reply.redirect(`/login${next}`, 303);
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) request.log.error({ err: error }, 'console page failed');
  // the built-in English: the page failed before (or while) the user's texts were read
  const say = sayFrom();
  const title =
    error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET'
      ? say('error.formExpired')
      : status === 500
        ? say('error.ours')
        : status === 404
          ? say('error.noPage')
          : error.message;
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .view('problem', { title: say('error.title'), problem: { status, title }, back: '/' }, LAYOUT);
}

/** A handlebars of the console's own, with every views/partials/*.hbs as a partial named after its file. */
function viewEngine(): typeof handlebars {
  const engine = handlebars.create();
  const dir = join(VIEWS, 'partials');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.hbs'))) engine.registerPartial(f.slice(0, -4), readFileSync(join(dir, f), 'utf8'));
  engine.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  // {{t "key" name=value}}: in a module's view its text (@texts), else the console's, in the page's
  // language (shell.texts), else the built-in English; {name} in the text is replaced by the value
  engine.registerHelper('t', function (key: string, options: { hash: Record<string, unknown>; data: { texts?: Record<string, string>; root: { shell?: { texts?: Record<string, string> } } } }) {
    return fillIn(options.data.texts?.[key] ?? options.data.root.shell?.texts?.[key] ?? CONSOLE_TEXTS[key] ?? key, options.hash);
  });
  return engine;
}
