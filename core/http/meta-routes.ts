// GET /api/meta: what the caller's console shows, from the loaded manifests
// only: the modules, the entities and fields the caller may read (labels,
// widgets, list columns, what they may do), and the menu entries whose pages
// open for them (context/menu-access.ts). Nothing here names a module: it is
// all in kernel.modules.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Kernel } from '../kernel.ts';
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import { accessFilter, type Ability } from '../access/abilities.ts';
import { ADMIN_ROLE } from '../access/role-directory.ts';
import { FieldTypes } from '../manifest/format.ts';
import { success } from './headers.ts';
import type { InterfaceTexts } from './interface-texts.ts';
import { entityKey, fieldKey, groupKey, menuKey, valueKey } from '../context/built-in-texts.ts';
import { opensFor } from '../context/menu-access.ts';
import { languagePreference } from '../i18n.ts';
import { describeRecord, MetaRecordMembers, planRecords, type Label, type RecordPlan } from './meta-record.ts';

const Str = (description: string) => Type.String({ description });

const MetaField = Type.Object(
  {
    name: Type.String(),
    type: Type.Unsafe<string>({ type: 'string', enum: [...FieldTypes] }),
    label: Type.String(),
    widget: Str("the manifest's widget, else the usual one for the type"),
    required: Type.Boolean(),
    readOnly: Type.Boolean({ description: 'in responses, never accepted in a request body' }),
    writeOnly: Type.Boolean({ description: 'accepted in request bodies, never in a response (a secret)' }),
    translatable: Type.Boolean(),
    filter: Type.Boolean({ description: 'offered as a list query parameter' }),
    sort: Type.Boolean({ description: 'allowed in the list sort parameter' }),
    search: Type.Boolean({ description: 'matched by the list search parameter' }),
    values: Type.Optional(Type.Array(Type.String(), { description: 'enum: allowed values' })),
    entity: Type.Optional(Str('ref: the referenced entity')),
    maxLength: Type.Optional(Type.Integer()),
    default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { description: "the value a create that omits the field stores (a form's starting value)" })),
    group: Type.Optional(Str('the section of the record page and form it is shown in, translated')),
    valueLabels: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'enum: how each value reads, translated' })),
    schema: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'json: the JSON Schema the value meets (a form is made of it)' })),
    schemaFrom: Type.Optional(
      Type.Object(
        { path: Type.String(), match: Type.String(), key: Type.Optional(Type.String()) },
        { additionalProperties: false, description: "json: the value's schema is in the item of this list route whose key equals the row's `match` field" },
      ),
    ),
    currency: Type.Optional(Str('integer/decimal: an amount of money whose ISO 4217 code is in this field (of the row; "quoteId.currency": of the row a ref points at)')),
  },
  { additionalProperties: false },
);

const MetaEntity = Type.Object(
  {
    name: Type.String(),
    module: Type.String(),
    label: Type.String(),
    scope: Type.Unsafe<string>({ type: 'string', enum: ['tenant', 'company'], description: 'company: rows belong to the X-Company-Id company' }),
    path: Type.Union([Type.String(), Type.Null()], { description: 'the collection path of its generated routes, if any' }),
    actions: Type.Array(Type.Unsafe<string>({ type: 'string', enum: ['read', 'create', 'update', 'delete'] }), { description: 'what the caller may do (on some rows at least)' }),
    listColumns: Type.Array(Type.String(), { description: 'columns of the list page (readable ones only)' }),
    defaultSort: Type.String(),
    fields: Type.Array(MetaField, { description: 'the fields the caller may read (on some rows at least), in manifest order' }),
    ...MetaRecordMembers,
  },
  { additionalProperties: false },
);

const Meta = Type.Object(
  {
    modules: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), version: Type.String(), description: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }), {
      description: 'loaded modules in dependency order',
    }),
    entities: Type.Array(MetaEntity, { description: 'entities the caller may read' }),
    menu: Type.Array(
      Type.Object(
        {
          module: Type.String(),
          label: Type.String(),
          path: Str('web path'),
          permission: Type.String(),
          icon: Type.Union([Type.String(), Type.Null()]),
          entity: Type.Union([Type.String(), Type.Null()], { description: 'the entity whose list, detail and form pages the entry opens; null: a page of its own' }),
          page: Type.Union([Type.Literal('translations'), Type.Null()], { description: 'a page the console draws itself: translations, the interface texts of the module' }),
          admin: Type.Boolean({ description: "the page needs full access: its route passes requireAdmin (so only an administrator's menu has it)" }),
        },
        { additionalProperties: false },
      ),
      { description: "entries whose page's route lets the caller in (its permission code, and full access where it needs it), in the modules' order" },
    ),
  },
  { $id: 'Meta', additionalProperties: false },
);

const WIDGETS: Record<string, string> = {
  string: 'text',
  text: 'textarea',
  integer: 'number',
  decimal: 'decimal',
  boolean: 'checkbox',
  date: 'date',
  datetime: 'datetime',
  enum: 'select',
  json: 'json',
  ref: 'reference',
};

const isPlainSchema = (schema: unknown): schema is Record<string, unknown> => typeof schema === 'object' && schema !== null && !('$ref' in schema) && !JSON.stringify(schema).includes('"$ref"');

function describeField(model: EntityModel, f: FieldModel, label: Label) {
  return {
    name: f.name,
    type: f.type,
    label: label(model.module, fieldKey(model.name, f.name), f.label ?? f.name),
    widget: f.widget ?? WIDGETS[f.type],
    required: f.required === true,
    readOnly: !model.writable.includes(f),
    writeOnly: f.secret === true,
    translatable: f.translatable === true,
    filter: f.filter === true,
    sort: f.sort === true,
    search: f.search === true,
    ...(f.values ? { values: f.values } : {}),
    ...(f.entity ? { entity: f.entity } : {}),
    ...(f.maxLength ? { maxLength: f.maxLength } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
    ...(f.group ? { group: label(model.module, groupKey(model.name, f.group), f.group) } : {}),
    ...(f.values ? { valueLabels: Object.fromEntries(f.values.map((v) => [v, label(model.module, valueKey(model.name, f.name, v), f.valueLabels?.[v] ?? v)])) } : {}),
    // a named schema ($ref) stays out: a form of it would need the manifest's schemas too
    ...(f.type === 'json' && !f.schemaFrom && isPlainSchema(f.schema) ? { schema: f.schema } : {}),
    ...(f.schemaFrom ? { schemaFrom: f.schemaFrom } : {}),
    ...(f.currency ? { currency: f.currency } : {}),
  };
}

function describeEntity(model: EntityModel, ability: Ability, isAdmin: boolean, path: string | null, plan: RecordPlan | undefined, routed: Set<Verb> | undefined, label: Label) {
  // a field rule (a grant's `fields`) may hide a field from this caller altogether
  const fields = model.fields.filter((f) => f.secret || accessFilter(ability, 'read', model.name, f.name) !== null);
  const readable = new Set(fields.filter((f) => !f.secret).map((f) => f.name));
  return {
    name: model.name,
    module: model.module,
    label: label(model.module, entityKey(model.name), model.label),
    scope: model.scope,
    path,
    // what the caller may do and a route lets them do (an activity log is read only, whoever may write it)
    actions: (['read', 'create', 'update', 'delete'] as const).filter((a) => ability.can(a, model.name) && (routed === undefined || routed.has(a))),
    listColumns: (model.definition.listColumns ?? []).filter((c) => readable.has(c)),
    defaultSort: model.defaultSort,
    fields: fields.map((f) => describeField(model, f, label)),
    ...describeRecord(model, plan, ability, isAdmin, label),
  };
}

type Verb = 'read' | 'create' | 'update' | 'delete';
const VERB_OF: Record<string, Verb> = { list: 'read', read: 'read', create: 'create', replace: 'update', update: 'update', delete: 'delete' };

/**
 * What the routes of each entity let a caller do at all: its generated operations, and a
 * module's own create (POST at the collection), change (PUT/PATCH of a row) and delete.
 */
function routedVerbs(kernel: Kernel): Map<string, Set<Verb>> {
  const verbs = new Map<string, Set<Verb>>();
  const add = (entity: string, verb: Verb) => verbs.set(entity, (verbs.get(entity) ?? new Set()).add(verb));
  const routes = kernel.modules.flatMap((m) => m.manifest.routes ?? []);
  const collections = new Map<string, string>();
  for (const r of routes) {
    if (!('entity' in r)) continue;
    if (!collections.has(r.entity)) collections.set(r.entity, r.path);
    verbs.set(r.entity, verbs.get(r.entity) ?? new Set());
    for (const op of r.operations ?? Object.keys(VERB_OF)) add(r.entity, VERB_OF[op]);
  }
  for (const r of routes) {
    if ('entity' in r) continue;
    const collection = collections.get(r.access.subject);
    if (!collection) continue;
    const item = r.path.startsWith(`${collection}/:`) && !r.path.slice(collection.length + 2).includes('/');
    if (r.path === collection && r.method === 'POST') add(r.access.subject, 'create');
    else if (r.path === collection && r.method === 'GET') add(r.access.subject, 'read');
    else if (item && (r.method === 'PUT' || r.method === 'PATCH')) add(r.access.subject, 'update');
    else if (item && r.method === 'DELETE') add(r.access.subject, 'delete');
    else if (item && r.method === 'GET') add(r.access.subject, 'read');
  }
  return verbs;
}

export function registerMetaRoutes(app: FastifyInstance, kernel: Kernel, texts: InterfaceTexts): void {
  app.addSchema(Meta);
  const paths = new Map<string, string>();
  for (const m of kernel.modules) for (const r of m.manifest.routes ?? []) if ('entity' in r && !paths.has(r.entity)) paths.set(r.entity, r.path);
  const plans = planRecords(kernel);
  const routed = routedVerbs(kernel);

  app.get(
    '/api/meta',
    {
      config: { access: { auth: 'user' } },
      schema: {
        operationId: 'metaGetMetadata',
        tags: ['Meta'],
        summary: 'The modules, the entities and fields the caller may read, and the menu entries whose pages open for them',
        description: "Built from the loaded manifests and the caller's roles; the same for every company of the caller. A web console builds its menu, lists and forms from it.",
        security: [{ bearerAuth: [] }],
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: success(Type.Ref('Meta'), 'What the caller may see') },
      },
    },
    async (request) => {
      const ability = request.ability!;
      const { roles } = request.principal!;
      const isAdmin = roles.includes(ADMIN_ROLE);
      // (the admin role's codes are every code: access/role-directory.ts)
      const codes = new Set(await kernel.abilities.codes(request.tenant!.id, roles));
      const models = [...kernel.models.values()].filter((m) => accessFilter(ability, 'read', m.name) !== null);
      const tenant = request.tenant!;
      const catalog = await texts.catalog(tenant.id, languagePreference(request.headers['accept-language'], tenant.defaultLanguage ?? kernel.config.defaultLanguage));
      const label: Label = (module, key, fallback) => catalog[module]?.[key] ?? fallback;
      return {
        modules: kernel.modules.map(({ manifest: m }) => ({ id: m.id, name: m.name, version: m.version, description: m.description ?? null })),
        entities: models.map((m) => describeEntity(m, ability, isAdmin, paths.get(m.name) ?? null, plans.get(m.name), routed.get(m.name), label)),
        menu: kernel.services.menu.filter((e) => opensFor(e, { isAdmin, codes })).map((e) => ({ ...e, label: label(e.module, menuKey(e.path), e.label) })),
      };
    },
  );
}
