// The scope compiler without a database: grant conditions → SQL text and bind
// parameters, for every operator, NULL semantics, caller placeholders bound per
// statement, relational $exists, and the compile cache. The same conditions run
// against the database in conditional-grants.test.ts and relational-grants.test.ts.
import t from 'tap';
import type { Manifest } from '../../../core/manifest/format.ts';
import { buildEntityModels } from '../../../core/model/entity-builder.ts';
import { compileCondition, compileScope, matching, and, TRUE } from '../../../core/data/scope.ts';
import { dayIn } from '../../../core/calendar.ts';
import { Params } from '../../../core/data/sql.ts';
import type { Principal } from '../../../core/access/principal.ts';

const manifest: Manifest = {
  id: 'pm',
  name: 'PM',
  version: '1.0.0',
  entities: [
    { name: 'Project', scope: 'company', fields: { name: { type: 'string' }, status: { type: 'string' }, leadId: { type: 'string' }, budget: { type: 'decimal' } } },
    { name: 'Member', scope: 'tenant', fields: { projectId: { type: 'ref', entity: 'Project' }, userId: { type: 'string' }, role: { type: 'string' } } },
    { name: 'Note', scope: 'tenant', fields: { body: { type: 'text' }, unit: { type: 'string' } } },
  ],
};
const models = new Map(buildEntityModels([manifest]).map((m) => [m.name, m]));
const project = models.get('Project')!;
const note = models.get('Note')!;
const alice: Principal = { kind: 'user', id: 'alice', roles: [], companyIds: ['c1', 'c2'] };

/** SQL and values of `cond` on `model`, as one statement would hold them. */
function sql(model = note, cond: Record<string, unknown>, caller: Principal | null = alice) {
  const p = new Params('tenant_x', caller?.companyIds[0] ?? null, caller ?? undefined);
  return { text: compileScope(models, model, cond)(p), values: p.values };
}

t.test("${today} is the day on the tenant's clock", async (t) => {
  const at = (timeZone: string) => {
    const p = new Params('tenant_x', null, alice, timeZone);
    compileCondition(models, note, { unit: { $lte: '${today}' } })(p);
    return p.values[0];
  };
  t.equal(at('UTC'), dayIn('UTC'));
  t.equal(at('Pacific/Kiritimati'), dayIn('Pacific/Kiritimati'), 'fourteen hours ahead of UTC');
  // 25 hours apart: these two zones never share a day, so a binding that ignored the zone could not pass both
  t.not(at('Pacific/Kiritimati'), at('Pacific/Pago_Pago'));
  t.equal(at('Pacific/Pago_Pago'), dayIn('Pacific/Pago_Pago'));
  t.equal(new Params('tenant_x', null).timeZone, 'UTC', 'UTC unless the tenant names a zone');
});

t.test('comparison operators, with NULL distinct from every value', async (t) => {
  t.same(sql(note, {}), { text: 'true', values: [] }, '{} is every row');
  t.same(sql(note, { unit: 'kg' }), { text: 't."unit" = $1', values: ['kg'] });
  t.same(sql(note, { unit: null }), { text: 't."unit" is null', values: [] });
  t.same(sql(note, { unit: { $eq: null } }), { text: 't."unit" is null', values: [] });
  t.same(sql(note, { unit: { $ne: null } }), { text: 't."unit" is not null', values: [] });
  t.same(sql(note, { unit: { $ne: 'kg' } }), { text: 't."unit" is distinct from $1', values: ['kg'] }, '$ne holds for NULL');
  t.same(sql(note, { unit: { $in: ['kg', 'g'] } }), { text: 't."unit" = any($1)', values: [['kg', 'g']] });
  t.same(sql(note, { unit: { $nin: ['kg'] } }), { text: '(t."unit" is null or not (t."unit" = any($1)))', values: [['kg']] }, '$nin holds for NULL');
  t.same(sql(note, { version: { $gt: 1, $lte: 5 } }), { text: '(t."version" > $1) and (t."version" <= $2)', values: [1, 5] });
  t.same(sql(note, { createdAt: { $gte: '2026-01-01' } }), { text: 't."created_at" >= $1', values: ['2026-01-01'] }, 'kernel fields by their columns');
});

t.test('logical operators', async (t) => {
  t.same(sql(note, { $or: [{ unit: 'kg' }, { unit: 'g' }] }), { text: '((t."unit" = $1) or (t."unit" = $2))', values: ['kg', 'g'] });
  t.same(sql(note, { $and: [{ unit: 'kg' }, { body: 'x' }] }), { text: '(t."unit" = $1) and (t."body" = $2)', values: ['kg', 'x'] });
  t.same(sql(note, { $not: { unit: 'kg' } }), { text: 'not (t."unit" = $1)', values: ['kg'] });
  t.same(sql(note, { $or: [] }), { text: 'false', values: [] }, 'an empty $or holds for no row');
});

t.test("company-scoped entities carry the statement's company", async (t) => {
  t.same(sql(project, {}), { text: 't."company_id" = $1', values: ['c1'] });
  t.same(sql(project, { status: 'open' }), { text: '(t."company_id" = $1) and (t."status" = $2)', values: ['c1', 'open'] });
});

t.test('caller placeholders are bound per statement, never compiled in', async (t) => {
  const cond = { leadId: '${user.id}', companyId: { $in: '${user.companyIds}' } };
  const bob: Principal = { kind: 'user', id: 'bob', roles: [], companyIds: ['c9'] };
  t.same(sql(project, cond, alice).values, ['c1', 'alice', ['c1', 'c2']]);
  t.same(sql(project, cond, bob).values, ['c9', 'bob', ['c9']], 'the same compiled scope, another caller');
  t.same(sql(project, { leadId: { $in: ['${user.id}', 'x'] } }).values, ['c1', ['alice', 'x']], 'placeholders inside lists');
  t.throws(() => sql(note, { unit: '${user.id}' }, null), /no caller/, 'a statement without a caller cannot bind one');
});

t.test('relational conditions compile to subqueries: one column an uncorrelated in, more a correlated exists', async (t) => {
  const member = { $exists: { entity: 'Member', on: { projectId: 'id' }, where: { userId: '${user.id}', role: { $in: ['owner', 'manager'] } } } };
  t.same(sql(project, member), {
    text: '(t."company_id" = $1) and ((t."id" is not null and t."id" in (select r1."project_id" from "tenant_x"."pm_members" r1 where r1."project_id" is not null and (r1."user_id" = $2) and (r1."role" = any($3)))))',
    values: ['c1', 'alice', ['owner', 'manager']],
  });
  t.same(sql(project, { $or: [{ leadId: '${user.id}' }, member] }).text.match(/ in \(select/g)?.length, 1, 'inside $or');
  const nested = { $exists: { entity: 'Member', on: { projectId: 'id' }, where: { $exists: { entity: 'Member', on: { userId: 'userId' }, where: { role: 'owner' } } } } };
  t.match(
    sql(project, nested).text,
    /from "tenant_x"."pm_members" r1 where r1."project_id" is not null and \(r1."user_id" is not null and r1."user_id" in \(select r2."user_id" from "tenant_x"."pm_members" r2 where r2."user_id" is not null and r2."role" = \$2\)\)/,
    'each level its own alias',
  );
  t.same(
    sql(project, { $exists: { entity: 'Member', on: { projectId: 'id' } } }).text,
    '(t."company_id" = $1) and ((t."id" is not null and t."id" in (select r1."project_id" from "tenant_x"."pm_members" r1 where r1."project_id" is not null and true)))',
    'no where: any related row',
  );
  t.same(
    sql(project, { $exists: { entity: 'Member', on: { projectId: 'id', userId: 'leadId' } } }).text,
    '(t."company_id" = $1) and (exists (select 1 from "tenant_x"."pm_members" r1 where r1."project_id" = t."id" and r1."user_id" = t."lead_id" and true))',
    'two columns: a correlated exists',
  );
});

t.test('compiled once per condition object and model', async (t) => {
  const cond = { unit: 'kg' };
  t.equal(compileScope(models, note, cond), compileScope(models, note, cond));
  t.not(compileScope(models, note, cond), compileScope(models, note, { unit: 'kg' }), 'another object, another entry');
  t.throws(() => compileScope(models, note, { nope: 1 }), /unknown field "nope"/);
});

t.test('matching and and()', async (t) => {
  const p = new Params('s', null);
  t.equal(and([TRUE, matching(note, { unit: 'kg', id: 'n1' })])(p), 't."unit" = $1 and t."id" = $2');
  t.same(p.values, ['kg', 'n1']);
  t.equal(and([TRUE, TRUE]), TRUE);
  t.equal(matching(note, {}), TRUE);
});
