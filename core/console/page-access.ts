// Who may open a console page: everyone the API route behind it lets in. A
// menu entry's page passes its entry's permission code, and the guards of the
// route it reads: an entity's pages those of the entity's generated routes
// ("admin": authenticate → requireRole → requireAdmin), a page a module draws
// itself those its menu entry declares ("admin"). The menu offers a page only
// to those it opens for, and the page refuses the others with a 403.
import type { Kernel } from '../kernel.ts';
import type { Me, Page } from './shell.ts';

export interface PageGuard {
  /** the menu entry's permission code */
  permission: string;
  /** full access only: the caller must pass requireAdmin */
  admin: boolean;
}

/** The guards of every menu entry's page, by its path. */
export function pageGuards(kernel: Kernel): Map<string, PageGuard> {
  // an entity's pages read its first generated routes, as GET /api/meta names them
  const routeAdmin = new Map<string, boolean>();
  for (const { manifest } of kernel.modules) {
    for (const r of manifest.routes ?? []) if ('entity' in r && !routeAdmin.has(r.entity)) routeAdmin.set(r.entity, r.admin === true);
  }
  const declared = new Map(kernel.modules.flatMap(({ manifest }) => (manifest.menu ?? []).map((e) => [e.path, e.admin === true] as const)));
  return new Map(kernel.services.menu.map((e) => [e.path, { permission: e.permission, admin: declared.get(e.path) === true || (e.entity !== null && routeAdmin.get(e.entity) === true) }]));
}

/** Whether the caller passes a page's guards (no guard: a page of no menu entry, the API decides). */
export function mayOpen(guard: PageGuard | undefined, me: Pick<Me, 'isAdmin' | 'permissions'>): boolean {
  if (!guard) return true;
  return me.permissions.includes(guard.permission) && (!guard.admin || me.isAdmin);
}

/** The entry a console path is the page of, or is below (the deepest: /ai/reports/history is an entry of its own). */
export function entryOf(guards: Map<string, PageGuard>, path: string): PageGuard | undefined {
  let best: string | undefined;
  for (const p of guards.keys()) if ((path === p || path.startsWith(`${p}/`)) && (!best || p.length > best.length)) best = p;
  return best === undefined ? undefined : guards.get(best);
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
