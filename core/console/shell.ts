// What every console page shows around its content: the user, the company and
// language switchers and the left-hand menu, all read from the API (GET
// /api/auth/me and GET /api/meta), so the menu holds exactly the entries whose
// page opens for the user (context/menu-access.ts: their code, and the guards
// of the page's route), and only those the console has a page for.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleApi, LoginRequired } from './api-client.ts';
import type { MetaEntity } from './fields.ts';
import { COOKIES } from './session.ts';
import { entryOf, type MenuEntry } from '../context/menu-access.ts';
import { sayFrom, type Say } from './texts.ts';

export interface Meta {
  modules: { id: string; name: string }[];
  entities: MetaEntity[];
  /** the entries of GET /api/meta: the kernel's menu entries whose pages open for the user, labels in the user's language */
  menu: MenuEntry[];
}

export interface Me {
  id: string;
  email: string;
  name: string;
  tenant: string;
  isAdmin: boolean;
  permissions: string[];
  companies: { id: string; code: string; name: string | null }[];
  companyId: string | null;
}

export interface Page {
  api: ConsoleApi;
  me: Me;
  meta: Meta;
  /** the layout's data: user, switchers, menu, CSRF token */
  shell: Record<string, unknown>;
  entity(name: string): MetaEntity | undefined;
  /** the console path of an entity's pages, if it has any */
  pathOf(entity: string): string | undefined;
  /** the texts of the module whose page this is (loadPage's `module`), in the user's language */
  moduleTexts: Record<string, string>;
  /** the console's own text `key` in the user's language, placeholders filled in */
  text: Say;
}

/** How a console route loads the shell around its page and renders a view in the layout. */
export interface ConsoleRenderer {
  /** `module`: the module whose page it is, whose texts the page shows (Page.moduleTexts) */
  load(request: FastifyRequest, reply: FastifyReply, module?: string): Promise<Page>;
  render(reply: FastifyReply, page: Page, view: string, data: Record<string, unknown>, status?: number): FastifyReply;
}

/** What the console serves, for every page the same. */
export interface ConsoleSite {
  /** paths of pages the console serves besides the generic entity pages (dashboards) */
  special: ReadonlySet<string>;
  /** every menu entry, with its page's guards (context/menu-access.ts), whoever may open it */
  menu: readonly MenuEntry[];
  languages: string[];
}

/**
 * `module`: the module whose page this is, whose texts it shows besides the
 * console's. A page that needs full access the caller lacks is a PageForbidden.
 */
export async function loadPage(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, { special, menu, languages }: ConsoleSite, module?: string): Promise<Page> {
  const api = new ConsoleApi(app, request, reply);
  // one after the other: the first may rotate the tokens, the second then uses the new ones
  const me = await api.get<Me>('/api/auth/me');
  const namespaces = module ? `console,${module}` : 'console';
  const [meta, texts] = await Promise.all([api.get<Meta>('/api/meta'), api.get<{ texts: Record<string, Record<string, string>> }>(`/api/translations/catalog?namespaces=${namespaces}`)]);
  if (!me.ok || !meta.ok) throw new LoginRequired();
  const entities = new Map(meta.body.entities.map((e) => [e.name, e]));
  const served = meta.body.menu.filter((e) => special.has(e.path) || (e.entity !== null && entities.has(e.entity)));
  const paths = new Map(served.filter((e) => e.entity).map((e) => [e.entity!, e.path]));
  const current = request.url.split('?')[0];
  const names = new Map(meta.body.modules.map((m) => [m.id, m.name]));
  const groups: { name: string; entries: unknown[] }[] = [];
  for (const e of served) {
    const active = current === e.path || current.startsWith(`${e.path}/`);
    const entry = { label: e.label, path: e.path, icon: e.icon, active };
    const group = groups.at(-1);
    if (group && group.name === names.get(e.module)) group.entries.push(entry);
    else groups.push({ name: names.get(e.module) ?? e.module, entries: [entry] });
  }
  const language = request.cookies[COOKIES.language] ?? '';
  const page: Page = {
    api,
    me: me.body,
    meta: meta.body,
    entity: (name) => entities.get(name),
    pathOf: (entity) => paths.get(entity),
    moduleTexts: (module && texts.ok ? texts.body.texts[module] : undefined) ?? {},
    text: sayFrom(texts.ok ? texts.body.texts.console : {}),
    shell: {
      user: me.body,
      csrf: reply.generateCsrf(),
      // the console's own strings in the user's language ({{t "key"}} in the views)
      texts: texts.ok ? texts.body.texts.console : {},
      menu: groups,
      firstPath: served[0]?.path ?? null,
      companies: me.body.companies.map((c) => ({ ...c, label: c.name ? `${c.name} (${c.code})` : c.code, selected: c.id === me.body.companyId })),
      languages: languages.map((l) => ({ code: l, selected: l === language })),
      automaticLanguage: language === '',
      here: request.url,
    },
  };
  // the guards of the page's route the menu checks, checked here too: requireAdmin answers 403, as the API would;
  // but an entity page whose code the caller lacks is no page at all for them (404 from the entity pages)
  const entry = entryOf(menu, current);
  const unknownToThem = entry?.entity != null && !me.body.permissions.includes(entry.permission);
  if (entry?.admin && !me.body.isAdmin && !unknownToThem) throw new PageForbidden(page);
  return page;
}

/** A page the caller's roles do not open (its route would refuse them): a 403 in the layout, around it their menu. */
export class PageForbidden extends Error {
  readonly statusCode = 403;
  readonly page: Page;

  constructor(page: Page) {
    super('the page needs full access');
    this.page = page;
  }
}
