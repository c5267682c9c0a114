// Who a menu entry's page opens for: everyone the API route behind it lets in.
// An entry carries its route's guards: its permission code, and requireAdmin
// ("admin") from the entity's generated routes (authenticate → requireRole →
// requireAdmin) or, for a page a module draws itself, from the entry's own
// "admin". GET /api/meta, ctx.menu() and the console all offer a page only to
// those it opens for (opensFor), and the console refuses the others with a 403.
import type { Manifest } from '../manifest/format.ts';

/** A page of the web console a module's manifest lists in its menu. */
export interface MenuEntry {
  /** the id of the module whose manifest lists it */
  module: string;
  /** the entry's text as the manifest gives it */
  label: string;
  /** the console page's web path (/crm/leads) */
  path: string;
  /** the permission code a caller needs to see it */
  permission: string;
  /** the manifest's icon name; null when it names none */
  icon: string | null;
  /** the entity whose generic console pages the entry opens, if any */
  entity: string | null;
  /** a page the console draws itself (translations: the module's interface texts) */
  page: 'translations' | null;
  /** the page needs full access: its route passes requireAdmin (the entity's routes' "admin", else the entry's own) */
  admin: boolean;
}

/** The menu entries in load order, each with the entity its console pages show (named, or the one routed at /api + its path) and its guards. */
export function menuOf(manifests: Manifest[]): MenuEntry[] {
  const routed = new Map<string, string>();
  // an entity's pages read its first generated routes, as GET /api/meta names them
  const adminEntity = new Map<string, boolean>();
  for (const m of manifests) {
    for (const r of m.routes ?? []) {
      if (!('entity' in r)) continue;
      if (!routed.has(r.path)) routed.set(r.path, r.entity);
      if (!adminEntity.has(r.entity)) adminEntity.set(r.entity, r.admin === true);
    }
  }
  return manifests.flatMap((m) =>
    (m.menu ?? []).map((e) => {
      const entity = e.entity ?? routed.get(`/api${e.path}`) ?? null;
      return {
        module: m.id,
        label: e.label,
        path: e.path,
        permission: e.permission,
        icon: e.icon ?? null,
        entity,
        page: e.page ?? null,
        admin: e.admin === true || (entity !== null && adminEntity.get(entity) === true),
      };
    }),
  );
}

/** A caller as a page's guards see them: whether they pass requireAdmin, and the permission codes they hold. */
export interface MenuCaller {
  isAdmin: boolean;
  codes: ReadonlySet<string>;
}

/** Whether the caller passes every guard of the entry's page: its permission code, and requireAdmin if it needs it. */
export function opensFor(entry: Pick<MenuEntry, 'permission' | 'admin'>, caller: MenuCaller): boolean {
  return caller.codes.has(entry.permission) && (!entry.admin || caller.isAdmin);
}

/** The entry a console path is the page of, or is below (the deepest: /ai/reports/history is an entry of its own). */
export function entryOf(menu: readonly MenuEntry[], path: string): MenuEntry | undefined {
  let best: MenuEntry | undefined;
  for (const e of menu) if ((path === e.path || path.startsWith(`${e.path}/`)) && (!best || e.path.length > best.path.length)) best = e;
  return best;
}
