// The entity builder turns manifest fields into tables: checked on the DDL
// MikroORM generates for a tenant schema, then on a real schema (the DDL runs,
// its defaults hold, and a second diff finds nothing to change).
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { migrateSchema, pendingStatements } from '../../../core/db/migrator.ts';
import { VERSION_TABLE } from '../../../core/db/schema-versions.ts';
import { FIXTURES, kernelKit } from '../../fixtures/kernels.ts';

const BUILDER = join(FIXTURES, 'manifests', 'builder');

/** Splits at top-level commas: not inside quotes or parentheses. */
function topLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(list.slice(start).trim());
  return parts;
}

/** Column name → its definition, from the `create table` statement of one table. */
function columnsOf(ddl: string, schema: string, table: string): Map<string, string> {
  const head = `create table "${schema}"."${table}" (`;
  const line = ddl.split('\n').find((l) => l.startsWith(head));
  if (!line) throw new Error(`no create table for ${table}`);
  const body = line.slice(head.length, line.lastIndexOf(')'));
  const columns = new Map<string, string>();
  for (const part of topLevel(body)) {
    const m = /^"([^"]+)" (.*)$/.exec(part);
    if (m) columns.set(m[1], m[2]);
    else columns.set('(primary key)', part);
  }
  return columns;
}

/** Every match of a statement pattern in the DDL, each as its capture groups. */
const statements = (ddl: string, pattern: RegExp) => [...ddl.matchAll(pattern)].map((m) => m.slice(1)).sort((a, b) => a.join().localeCompare(b.join()));

t.test('DDL for a tenant schema', async (t) => {
  const kit = await kernelKit(t, { manifests: BUILDER });
  const kernel = await kit.open();
  const schema = 'tenant_ddl_check';
  const ddl = await kernel.dbs.main.schema.getCreateSchemaSQL({ schema, wrap: false });
  // asserts on the subtest it is given, so a missing statement fails that subtest
  const has = (t: Test, statement: string) => t.ok(ddl.includes(statement), statement);
  const LONG = 'kit_a_table_name_long_enough_for_hashed_constraint';
  const indexes = statements(ddl, new RegExp(`^create index "[^"]+" on "${schema}"\\."(\\w+)" \\(([^)]+)\\);$`, 'gm'));

  await t.test('every column of every kind', async (t) => {
    const box = columnsOf(ddl, schema, 'kit_boxes');
    t.same(Object.fromEntries(box), {
      id: 'uuid not null',
      company_id: 'uuid not null',
      label: 'varchar(80) not null',
      plain: 'varchar(255) null',
      notes: "text null default 'it''s; a note'",
      title: 'jsonb null',
      body: 'jsonb null',
      qty: 'int null default 3',
      amount: 'numeric(12,2) null',
      rate: 'numeric(5,4) null',
      price: "numeric(10,2) null default '1.50'",
      flag: 'boolean not null default false',
      day: "date null default '2024-01-31'",
      at: 'timestamptz null',
      kind: "text not null default 'a'",
      meta: `jsonb null default '"hello"'`,
      extra: 'jsonb null',
      parent_id: 'uuid null',
      org_id: 'uuid not null',
      other_id: 'uuid null',
      created_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
      version: 'int not null default 1',
      '(primary key)': 'primary key ("id")',
    });
    t.notMatch(ddl, /numeric\(10,\s*0\)/, 'never numeric(10,0)');
  });

  await t.test('company_id only on company-scoped tables', async (t) => {
    t.ok(columnsOf(ddl, schema, 'kit_boxes').has('company_id'));
    t.notOk(columnsOf(ddl, schema, 'kit_tags').has('company_id'));
    t.notOk(columnsOf(ddl, schema, 'org_companies').has('company_id'));
    has(t, `create index "kit_boxes_company_id_index" on "${schema}"."kit_boxes" ("company_id");`);
  });

  await t.test('unique keys: per company on company-scoped entities, plain on tenant-scoped ones', async (t) => {
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_company_id_label_unique" unique ("company_id", "label");`);
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_company_id_plain_qty_unique" unique ("company_id", "plain", "qty");`);
    has(t, `alter table "${schema}"."kit_tags" add constraint "kit_tags_name_unique" unique ("name");`);
    has(t, `alter table "${schema}"."kit_tags" add constraint "kit_tags_box_id_unique" unique ("box_id");`);
    has(t, `alter table "${schema}"."kit_tags" add constraint "kit_tags_name_box_id_unique" unique ("name", "box_id");`);
    has(t, `alter table "${schema}"."org_companies" add constraint "org_companies_code_unique" unique ("code");`);
    t.notMatch(ddl, /unique \("label"\)/, 'no tenant-wide unique on a company-scoped field');
  });

  await t.test('enum check', async (t) => {
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_kind_check" check ("kind" in ('a', 'b', 'c''d'));`);
    // every enum field gets one, with its values quoted and escaped; no other field does
    t.same(statements(ddl, new RegExp(`^alter table "${schema}"\\."(\\w+)" add constraint "[^"]+" check \\((.*)\\);$`, 'gm')), [
      [LONG, `"another_extraordinarily_long_field_name_here" in ('x', 'y')`],
      ['kit_boxes', `"kind" in ('a', 'b', 'c''d')`],
    ]);
  });

  await t.test('foreign keys with their delete rule, each indexed', async (t) => {
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_parent_id_foreign" foreign key ("parent_id") references "${schema}"."kit_boxes" ("id") on delete set null;`);
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_org_id_foreign" foreign key ("org_id") references "${schema}"."org_companies" ("id") on delete cascade;`);
    has(t, `alter table "${schema}"."kit_boxes" add constraint "kit_boxes_other_id_foreign" foreign key ("other_id") references "${schema}"."org_companies" ("id") on delete restrict;`);
    has(t, `alter table "${schema}"."kit_tags" add constraint "kit_tags_box_id_foreign" foreign key ("box_id") references "${schema}"."kit_boxes" ("id") on delete restrict;`);
    // every ref field and only those: onDelete as declared, restrict when unset
    const foreign = statements(
      ddl,
      new RegExp(`^alter table "${schema}"\\."(\\w+)" add constraint "[^"]+" foreign key \\("(\\w+)"\\) references "${schema}"\\."(\\w+)" \\("id"\\) on delete ([a-z ]+);$`, 'gm'),
    );
    t.same(foreign, [
      [LONG, 'a_long_reference_to_the_company_entity_id', 'org_companies', 'restrict'],
      ['kit_boxes', 'org_id', 'org_companies', 'cascade'],
      ['kit_boxes', 'other_id', 'org_companies', 'restrict'],
      ['kit_boxes', 'parent_id', 'kit_boxes', 'set null'],
      ['kit_tags', 'box_id', 'kit_boxes', 'restrict'],
    ]);
    for (const [table, column] of foreign)
      t.ok(
        indexes.some(([tb, cols]) => tb === table && cols === `"${column}"`),
        `${table}.${column} indexed`,
      );
  });

  await t.test('indexes declared by a field', async (t) => {
    has(t, `create index "kit_boxes_qty_index" on "${schema}"."kit_boxes" ("qty");`);
    // besides company_id and refs, only fields with `index: true` get an index
    const implied = new Set(['"company_id"', '"parent_id"', '"org_id"', '"other_id"', '"box_id"', '"a_long_reference_to_the_company_entity_id"']);
    t.same(
      indexes.filter(([, cols]) => !implied.has(cols)),
      [
        [LONG, '"an_extraordinarily_long_field_name_for_tests"'],
        ['kit_boxes', '"qty"'],
      ],
    );
  });

  await t.test('constraint names stay within 63 characters', async (t) => {
    const names = [...ddl.matchAll(/(?:constraint|index) "([^"]+)"/g)].map((m) => m[1]);
    t.ok(
      names.some((n) => n.startsWith('kit_a_table_name_long_enough')),
      'the long table has constraints',
    );
    for (const name of names) t.ok(name.length <= 63, `${name} (${name.length})`);
    t.equal(new Set(names).size, names.length, 'names are distinct');
  });

  await t.test('the shipped catalog: money as numeric(12,2), per-company SKU', async (t) => {
    const kitReal = await kernelKit(t);
    const real = await kitReal.open();
    const sql = await real.dbs.main.schema.getCreateSchemaSQL({ schema, wrap: false });
    const product = columnsOf(sql, schema, 'catalog_products');
    t.equal(product.get('price'), 'numeric(12,2) not null');
    t.equal(product.get('sku'), 'varchar(64) not null');
    t.equal(product.get('name'), 'jsonb not null');
    t.equal(product.get('company_id'), 'uuid not null');
    t.ok(sql.includes(`add constraint "catalog_products_company_id_sku_unique" unique ("company_id", "sku")`));
    t.ok(sql.includes(`add constraint "catalog_products_unit_check" check ("unit" in ('piece', 'kg', 'litre', 'metre', 'hour'))`));
    t.ok(sql.includes(`foreign key ("category_id") references "${schema}"."catalog_categories" ("id") on delete restrict`));
  });
});

t.test('on a real schema', async (t) => {
  const kit = await kernelKit(t, { manifests: BUILDER });
  const kernel = await kit.open();
  const orm = kernel.dbs.main;
  const conn = orm.em.getConnection();
  const schema = `tenant_b_${randomBytes(5).toString('hex')}`;
  t.teardown(() => conn.execute(`drop schema if exists "${schema}" cascade`));
  const q = (sql: string, params: unknown[] = []) => conn.execute(sql, params) as Promise<Record<string, any>[]>;

  const { applied } = await migrateSchema(orm, schema, kernel.versions);
  t.ok(applied > 0);

  await t.test('a second diff finds nothing to change', async (t) => {
    t.same(await pendingStatements(orm, schema), []);
  });

  await t.test('the versions of each module are recorded', async (t) => {
    const rows = await q(`select module, version, digest from "${schema}"."${VERSION_TABLE}" order by module`);
    t.same(
      rows,
      kernel.versions.map((v) => ({ module: v.module, version: v.version, digest: v.digest })).sort((a, b) => a.module.localeCompare(b.module)),
    );
  });

  await t.test('column defaults hold for rows written without them', async (t) => {
    const [org] = await q(`insert into "${schema}".org_companies (id, code, created_at, updated_at) values (gen_random_uuid(), 'A', now(), now()) returning id`);
    await q(`insert into "${schema}".kit_boxes (id, company_id, label, org_id, created_at, updated_at) values (gen_random_uuid(), gen_random_uuid(), 'raw', ?, now(), now())`, [org.id]);
    const [row] = await q(`select notes, qty, price::text as price, flag, day::text as day, kind, meta, version from "${schema}".kit_boxes where label = 'raw'`);
    t.same(row, { notes: "it's; a note", qty: 3, price: '1.50', flag: false, day: '2024-01-31', kind: 'a', meta: 'hello', version: 1 });
  });

  await t.test('entities created through the ORM get the runtime defaults', async (t) => {
    const em = orm.em.fork({ schema });
    const Company = kernel.model('Company').ormEntity;
    const Box = kernel.model('Box').ormEntity;
    const company = em.create(Company, { code: 'B' } as never) as { id: string };
    const box = em.create(Box, { label: 'orm', companyId: company.id, orgId: company.id } as never) as { id: string };
    await em.flush();
    const [row] = await q(`select notes, qty, price::text as price, flag, kind, meta, version from "${schema}".kit_boxes where id = ?`, [box.id]);
    t.same(row, { notes: "it's; a note", qty: 3, price: '1.50', flag: false, kind: 'a', meta: 'hello', version: 1 }, 'a JSON default is stored once encoded');
  });

  await t.test('the enum check and the delete rules are enforced', async (t) => {
    const [org] = await q(`insert into "${schema}".org_companies (id, code, created_at, updated_at) values (gen_random_uuid(), 'C', now(), now()) returning id`);
    const [other] = await q(`insert into "${schema}".org_companies (id, code, created_at, updated_at) values (gen_random_uuid(), 'D', now(), now()) returning id`);
    const insertBox = (label: string, extra = '', values: unknown[] = []) =>
      q(
        `insert into "${schema}".kit_boxes (id, company_id, label, org_id, created_at, updated_at${extra ? `, ${extra}` : ''})
         values (gen_random_uuid(), gen_random_uuid(), ?, ?, now(), now()${values.map(() => ', ?').join('')}) returning id`,
        [label, org.id, ...values],
      );
    await t.rejects(insertBox('bad-kind', 'kind', ['z']), { code: '23514' }, 'check violation');
    const [parent] = await insertBox('parent', 'other_id', [other.id]);
    const [child] = await insertBox('child', 'parent_id', [parent.id]);
    const restricted = await q(`delete from "${schema}".org_companies where id = ?`, [other.id]).then(
      () => undefined,
      (e: { code?: string }) => e,
    );
    // PostgreSQL 15 reports a RESTRICT violation as 23503, 17+ (PGlite) as 23001 restrict_violation
    t.ok(['23503', '23001'].includes(restricted?.code ?? ''), 'restrict');
    await q(`update "${schema}".kit_boxes set other_id = null where id = ?`, [parent.id]);
    await q(`delete from "${schema}".kit_boxes where id = ?`, [parent.id]);
    const [after] = await q(`select parent_id from "${schema}".kit_boxes where id = ?`, [child.id]);
    t.equal(after.parent_id, null, 'set null');
    await q(`delete from "${schema}".org_companies where id = ?`, [org.id]);
    t.same(await q(`select id from "${schema}".kit_boxes where id = ?`, [child.id]), [], 'cascade');
  });
});
