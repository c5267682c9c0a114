// Renders templates/module/ with handlebars. The views handed to the templates
// are plain data decided by model.ts and test-plan.ts; the templates hold only
// layout. JSON values are printed by the json/inline helpers (never by hand),
// so any text a spec carries comes out correctly escaped.
import { readFile, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';
import type { EntityPlan, ModulePlan } from './model.ts';
import type { TestView } from './test-plan.ts';

const TEMPLATE_DIR = fileURLToPath(new URL('../../templates/module/', import.meta.url));

/** JSON on one line the way the catalog manifest writes it: { "a": 1, "b": ["x", "y"] } */
export function inline(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inline).join(', ')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return entries.length ? `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${inline(v)}`).join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}

type Render = (view: object) => string;

export interface Templates {
  manifest: Render;
  entity: Render;
  route: Render;
  menuItem: Render;
  test: Render;
}

export async function loadTemplates(dir = TEMPLATE_DIR): Promise<Templates> {
  const hb = Handlebars.create();
  hb.registerHelper('json', (value: unknown) => JSON.stringify(value));
  hb.registerHelper('inline', (value: unknown) => inline(value));
  const partialDir = join(dir, 'partials');
  for (const file of (await readdir(partialDir)).filter((f) => f.endsWith('.hbs'))) {
    hb.registerPartial(basename(file).replace(/\.json\.hbs$|\.hbs$/, ''), await readFile(join(partialDir, file), 'utf8'));
  }
  const compile = async (file: string): Promise<Render> => {
    const template = hb.compile(await readFile(join(dir, file), 'utf8'), { strict: true, noEscape: true });
    return (view) => template(view);
  };
  // A partial rendered on its own, for --add-entity (last: no trailing comma).
  const partial = async (name: string): Promise<Render> => {
    const template = hb.compile(await readFile(join(partialDir, `${name}.json.hbs`), 'utf8'), { strict: true, noEscape: true });
    return (view) => template({ ...view, last: true }).replace(/\n$/, '');
  };
  return {
    manifest: await compile('manifest.json.hbs'),
    entity: await partial('entity'),
    route: await partial('route'),
    menuItem: await partial('menu-item'),
    test: await compile('entity.test.ts.hbs'),
  };
}

export function entityView(e: EntityPlan): object {
  const d = e.definition;
  return {
    name: d.name,
    label: d.label,
    description: d.description ?? null,
    scope: d.scope,
    table: d.table ?? null,
    fields: d.fields,
    unique: d.unique ?? null,
    listColumns: d.listColumns,
    defaultSort: d.defaultSort ?? null,
    path: e.path,
  };
}

export const menuView = (e: EntityPlan, permission: string) => ({ item: { label: e.menu.label, path: e.menu.path, entity: e.name, permission, icon: e.menu.icon } });

export function manifestView(plan: ModulePlan): object {
  return {
    id: plan.id,
    name: plan.name,
    version: plan.version,
    description: plan.description,
    dependsOn: plan.dependsOn,
    viewCode: plan.viewCode,
    manageCode: plan.manageCode,
    viewDescription: plan.viewDescription,
    manageDescription: plan.manageDescription,
    subjects: plan.given.map((e) => e.name),
    entities: plan.entities.map(entityView),
    menu: plan.given.map((e) => menuView(e, plan.viewCode)),
  };
}

export function testView(view: TestView): object {
  return { ...view, hasRefs: view.refs !== '{}' };
}
