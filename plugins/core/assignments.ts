// Which roles a user holds and which companies they belong to: read by anyone
// who may read the user (they are part of the user, so the links and names are
// read with system access once the user is), replaced as a whole by
// administrators (the routes are admin: true). Roles and companies reach a
// user's token at their next login or refresh; the tenant always keeps an
// active administrator.
import { handler, pick, validationError, type ModuleContext, type Row } from '../../core/plugin-api.ts';
import { CompanyIds, CompanyList, RoleIds, RoleList, UserParams } from './schemas.ts';
import { assertAdminLeft } from './admin-guard.ts';

const MAX = 1000;
const page = <T>(items: T[]) => ({ items, page: 1, size: MAX, total: items.length });

export async function rolesOf(ctx: ModuleContext, userId: string) {
  const all = ctx.system();
  const links = await all.data('UserRole').find({ userId }, { limit: MAX });
  const roles = links.length ? await all.data('Role').find({ id: { $in: links.map((l) => l.roleId) } }, { orderBy: 'name', limit: MAX }) : [];
  return page(roles.map((r) => ({ id: r.id as string, name: r.name as string })));
}

async function companiesOf(ctx: ModuleContext, userId: string) {
  const all = ctx.system();
  const links = await all.data('UserCompany').find({ userId }, { limit: MAX });
  const companies = links.length ? await all.data('Company').find({ id: { $in: links.map((l) => l.companyId) } }, { orderBy: 'code', limit: MAX }) : [];
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
    await tx.rolesChanged();
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
