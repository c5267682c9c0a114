// Which roles a user holds and which companies they belong to. A sub-resource
// takes the guards of what it exposes: the roles a user holds are read like
// /api/roles (role management, administrators), the companies like
// /api/companies, both as the caller through the scope compiler, and only of a
// user the caller may read; a caller who may only look people up (a name and
// e-mail grant) learns neither, nor whether the user exists. Replaced as a whole
// by administrators; the change holds from the user's next request (the kernel
// drops their cached roles and companies in every process once it commits), and
// the tenant always keeps an active administrator.
import { handler, pick, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { CompanyIds, CompanyList, RoleIds, RoleList, UserParams } from './schemas.ts';
import { assertAdminLeft } from './admin-guard.ts';

const MAX = 1000;
const page = <T>(items: T[]) => ({ items, page: 1, size: MAX, total: items.length });
const linkedTo = (link: string, key: string, userId: string) => ({ $exists: { entity: link, on: { [key]: 'id' }, where: { userId } } });

/** The roles of a user as `ctx` may read them (the system context for the kernel's own checks). */
export async function rolesOf(ctx: ModuleContext, userId: string) {
  const roles = await ctx.data('Role').find(linkedTo('UserRole', 'roleId', userId), { orderBy: 'name', limit: MAX });
  return page(roles.map((r) => ({ id: r.id as string, name: r.name as string })));
}

async function companiesOf(ctx: ModuleContext, userId: string) {
  const companies = await ctx.data('Company').find(linkedTo('UserCompany', 'companyId', userId), { orderBy: 'code', limit: MAX });
  return page(companies.map((c) => ({ id: c.id as string, code: c.code as string, name: pick(c.name, ctx.crud.read.prefs).text, isActive: c.isActive as boolean })));
}

/** 400 naming each id that is no row of `entity` the caller can read. */
async function requireRows(ctx: ModuleContext, entity: string, field: string, ids: string[]): Promise<void> {
  const found = new Set((ids.length ? await ctx.data(entity).find({ id: { $in: ids } }, { limit: ids.length }) : []).map((r) => r.id));
  const errors = ids.flatMap((id, i) => (found.has(id) ? [] : [{ path: `/${field}/${i}`, message: `no ${entity} with id ${id}` }]));
  if (errors.length) throw validationError(errors);
}

/**
 * Replaces the `link` rows of a user by one per id, inside the caller's
 * transaction. Link rows have no grants of their own: the admin-only route
 * decided, so they are written with system access.
 */
async function replaceLinks(tx: ModuleContext, link: string, key: string, userId: string, ids: string[]): Promise<void> {
  const links = tx.system().data(link);
  const current = await links.find({ userId }, { limit: MAX });
  const keep = new Set(ids);
  for (const row of current as Row[]) if (!keep.has(row[key])) await links.remove(row.id);
  const held = new Set(current.map((r) => r[key]));
  for (const id of ids) if (!held.has(id)) await links.create({ userId, [key]: id });
}

export const listUserRoles = handler({ params: UserParams, response: { 200: RoleList } }, async (ctx, request) => {
  const user = await ctx.data('User').read(request.params.id);
  return rolesOf(ctx, user.id);
});

export const setUserRoles = handler({ params: UserParams, body: RoleIds, response: { 200: RoleList } }, async (ctx, request) => {
  const { roleIds } = request.body;
  return ctx.transaction(async (tx) => {
    // the user's row first, as every user write locks it: role changes of one user go in turn
    const user = await tx.data('User').lock(request.params.id);
    await requireRows(tx, 'Role', 'roleIds', roleIds);
    await replaceLinks(tx, 'UserRole', 'roleId', user.id, roleIds);
    await assertAdminLeft(tx);
    return rolesOf(tx, user.id);
  });
});

export const listUserCompanies = handler({ params: UserParams, response: { 200: CompanyList } }, async (ctx, request) => {
  const user = await ctx.data('User').read(request.params.id);
  return companiesOf(ctx, user.id);
});

export const setUserCompanies = handler({ params: UserParams, body: CompanyIds, response: { 200: CompanyList } }, async (ctx, request) => {
  const { companyIds } = request.body;
  return ctx.transaction(async (tx) => {
    const user = await tx.data('User').lock(request.params.id);
    await requireRows(tx, 'Company', 'companyIds', companyIds);
    await replaceLinks(tx, 'UserCompany', 'companyId', user.id, companyIds);
    return companiesOf(tx, user.id);
  });
});
