// What GET /api/meta tells a console about an entity's record page, from the
// manifests alone: the fields naming and summing up a row, its related lists
// (every entity with a ref to it that can be listed by that ref: a nested
// route, a list "by" the ref, or a filter on it) and its actions (the custom
// routes a module declares on one row, POST|PUT|PATCH <collection>/:id/<verb>,
// or on the collection, POST <collection>/<verb>), with their request body's
// schema for a form. Planned once at start; per request only what the
// caller's ability allows is kept.
import { Type } from 'typebox';
import type { Kernel, LoadedModule } from '../kernel.ts';
import type { EntityModel, FieldModel } from '../model/entity-model.ts';
import type { CrudRoute, CustomRoute } from '../manifest/format.ts';
import { accessFilter, type Ability } from '../access/abilities.ts';
import { actionKey, relatedKey } from '../context/built-in-texts.ts';

/** A label in the caller's language: the tenant's text for its key, else the manifest's. */
export type Label = (module: string, key: string, fallback: string) => string;

const Str = (description: string) => Type.String({ description });

const MetaRelated = Type.Object(
  {
    entity: Str('the entity whose rows are listed'),
    field: Str('its ref field pointing at this record'),
    label: Type.Union([Type.String(), Type.Null()], { description: "the manifest's heading, translated; null: the console names the list after the entity" }),
    path: Str('the list route, {id} standing for the record\'s id (a nested route, a list "by" the ref, or the collection filtered on it)'),
    nested: Type.Boolean({ description: "the rows live under the record's path (quote lines, project members): created, changed and deleted there" }),
    upload: Type.Union([Type.String(), Type.Null()], { description: 'a route taking a file upload (multipart/form-data, part "file") that makes such a row, {id} standing for the record\'s id' }),
  },
  { additionalProperties: false },
);

const MetaAction = Type.Object(
  {
    name: Str("the handler's name"),
    label: Str('the button, translated'),
    method: Type.Unsafe<string>({ type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'] }),
    path: Str("the route, {id} standing for the row's id (row actions)"),
    summary: Str("what it does, in the manifest's words"),
    confirm: Type.Boolean({ description: 'asks for a confirmation first' }),
    reveals: Type.Union([Type.String(), Type.Null()], { description: 'a field of the answer shown once (a new API key)' }),
    when: Type.Union([Type.Record(Type.String(), Type.Array(Type.Union([Type.String(), Type.Boolean(), Type.Null()]))), Type.Null()], {
      description: 'offered only on rows whose fields hold one of these values',
    }),
    body: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'the JSON Schema of its request body; null: it takes none' }),
  },
  { additionalProperties: false },
);

const MetaTransitions = Type.Object(
  {
    field: Type.String(),
    initial: Type.Array(Type.String()),
    moves: Type.Record(Type.String(), Type.Array(Type.String())),
    reserved: Type.Array(Type.String(), { description: 'states only module code moves a row into (not offered in forms)' }),
  },
  { additionalProperties: false, description: 'the state flow of one enum field: what a create may start in and a write may move to' },
);

/** The record-page members of an entity in GET /api/meta. */
export const MetaRecordMembers = {
  titleField: Type.Union([Type.String(), Type.Null()], { description: 'the field naming a row in headings and references' }),
  statusField: Type.Union([Type.String(), Type.Null()], { description: "the enum field shown as a badge in the record's header" }),
  summaryFields: Type.Array(Type.String(), { description: "key facts in the record's header (readable ones only)" }),
  transitions: Type.Union([MetaTransitions, Type.Null()]),
  related: Type.Array(MetaRelated, { description: 'lists of the rows pointing at a record, the caller may read' }),
  rowActions: Type.Array(MetaAction, { description: 'what the caller may do to one row beyond reading and writing it' }),
  listActions: Type.Array(MetaAction, { description: 'what the caller may do to the collection as a whole' }),
  createReveals: Type.Union([Type.String(), Type.Null()], { description: "a field of a create's answer shown once (a new client's API key)" }),
  download: Type.Union([Type.String(), Type.Null()], { description: "the route answering a row's file (an attachment's bytes), {id} standing for the row's id" }),
  timeline: Type.Union([Type.String(), Type.Null()], {
    description: "the list of a row's audit records (who changed what, when), {id} standing for its id; null: not audited, or the log is not the caller's to read",
  }),
};

interface RelatedPlan {
  module: string;
  child: EntityModel;
  field: FieldModel;
  path: string;
  nested: boolean;
  upload: string | null;
  label: { module: string; key: string; text: string } | null;
}

interface ActionPlan {
  module: string;
  route: CustomRoute;
  path: string;
  body: Record<string, unknown> | null;
}

export interface RecordPlan {
  related: RelatedPlan[];
  rowActions: ActionPlan[];
  listActions: ActionPlan[];
  createReveals: string | null;
  download: string | null;
  /** the audit log's list of one row's records, and the log entity */
  timeline: { path: string; entity: string } | null;
}

const LABEL_FIELDS = ['name', 'title', 'label', 'subject', 'number', 'code', 'sku', 'key', 'email'];
const WRITES = new Set(['POST', 'PUT', 'PATCH']);
/** what follows a collection's path in a row's own route: `:<id>/<verb>` */
const ROW_VERB = /^:[a-z][A-Za-z0-9]*\/[a-z][a-z0-9-]*$/;
/** a row's route with `{id}` for its id parameter */
const withIdSlot = (path: string) => path.replace(/\/:[a-z][A-Za-z0-9]*\//, '/{id}/');

/** A custom route, the module declaring it and its schemas (the manifest's, else its handler's). */
interface Custom {
  module: LoadedModule;
  route: CustomRoute;
  schema: { body?: unknown; upload?: unknown; response?: Record<string, { mediaType?: string }> };
}

/** Per entity with generated routes: its related lists and actions, as the manifests declare them. */
export function planRecords(kernel: Kernel): Map<string, RecordPlan> {
  const crud = kernel.modules.flatMap((module) => (module.manifest.routes ?? []).flatMap((route) => ('entity' in route ? [{ module, route }] : [])));
  const customs: Custom[] = kernel.modules.flatMap((module) =>
    (module.manifest.routes ?? []).flatMap((route) =>
      'entity' in route ? [] : [{ module, route, schema: (route.schema ?? module.plugin?.handlers?.[route.handler]?.schema ?? {}) as Custom['schema'] }],
    ),
  );
  const uploads = customs.filter((c) => c.route.method === 'POST' && c.schema.upload !== undefined).map((c) => c.route);
  const plans = new Map<string, RecordPlan>();
  for (const model of kernel.models.values()) {
    const own = crud.find((c) => c.route.entity === model.name && !c.route.path.includes(':'));
    plans.set(model.name, {
      related: relatedOf(kernel, model, crud, uploads),
      rowActions: own ? actionsOn(customs, `${own.route.path}/:`, true) : [],
      listActions: own ? actionsOn(customs, `${own.route.path}/`, false) : [],
      createReveals: own ? (customs.find((c) => c.route.method === 'POST' && c.route.path === own.route.path)?.route.reveals ?? null) : null,
      download: own ? downloadOf(customs, own.route.path) : null,
      timeline: timelineOf(model, crud),
    });
  }
  return plans;
}

function relatedOf(kernel: Kernel, parent: EntityModel, crud: { module: LoadedModule; route: CrudRoute }[], uploads: CustomRoute[]): RelatedPlan[] {
  const found: RelatedPlan[] = [];
  for (const child of kernel.models.values()) {
    for (const field of child.refs) {
      if (field.entity !== parent.name || field.internal || field.related === false) continue;
      const routes = crud.filter((c) => c.route.entity === child.name);
      const lists = (ops: string[] | undefined) => !ops || ops.includes('list');
      const nested = routes.find((c) => c.route.path.split('/').includes(`:${field.name}`) && lists(c.route.operations));
      const by = routes.flatMap((c) => (c.route.lists ?? []).filter((l) => l.by === field.name));
      const filtered = routes.find((c) => !c.route.path.includes(':') && lists(c.route.operations) && field.filter);
      const path = nested ? nested.route.path.replace(`:${field.name}`, '{id}') : by[0] ? by[0].path.replace(`:${field.name}`, '{id}') : filtered ? `${filtered.route.path}?${field.name}={id}` : null;
      if (!path) continue;
      const upload = uploads.find((r) => r.access.subject === child.name && r.path.split('/').includes(`:${field.name}`));
      found.push({ module: child.module, child, field, path, nested: nested !== undefined, upload: upload ? upload.path.replace(`:${field.name}`, '{id}') : null, label: null });
    }
  }
  // the parent's manifest orders, renames and hides them
  const hints = parent.definition.related ?? [];
  const hintOf = (r: RelatedPlan) => hints.findIndex((h) => h.entity === r.child.name && (h.field === undefined || h.field === r.field.name));
  return found
    .filter((r) => !hints[hintOf(r)]?.hidden)
    .map((r) => {
      const hint = hints[hintOf(r)];
      return hint?.label ? { ...r, label: { module: parent.module, key: relatedKey(parent.name, hint.entity, hint.field), text: hint.label } } : r;
    })
    .sort((a, b) => rank(hintOf(a)) - rank(hintOf(b)));
}

/** An audited entity's records in its module's audit log, when that log is listed and filters by entity and row. */
function timelineOf(model: EntityModel, crud: { route: CrudRoute }[]): RecordPlan['timeline'] {
  const log = model.auditLog;
  const route = log ? crud.find((c) => c.route.entity === log && !c.route.path.includes(':') && (c.route.operations ?? ['list']).includes('list')) : undefined;
  return route && log ? { path: `${route.route.path}?entity=${model.name}&entityId={id}`, entity: log } : null;
}

/** The GET route of a row answering a file (its 200 names a media type), if the entity has one. */
function downloadOf(customs: Custom[], collection: string): string | null {
  const file = customs.find(
    (c) => c.route.method === 'GET' && c.route.path.startsWith(`${collection}/`) && ROW_VERB.test(c.route.path.slice(collection.length + 1)) && c.schema.response?.['200']?.mediaType,
  );
  return file ? withIdSlot(file.route.path) : null;
}

const rank = (i: number) => (i === -1 ? Number.MAX_SAFE_INTEGER : i);

/** Custom routes whose path is the prefix and one more segment (row: `:<id>/<verb>`), a user may call from a page. */
function actionsOn(customs: Custom[], prefix: string, row: boolean): ActionPlan[] {
  const shape = row ? ROW_VERB : /^[a-z][a-z0-9-]*$/;
  return customs.flatMap(({ module, route, schema }) => {
    if (route.auth || route.hidden || !route.path.startsWith(prefix)) return [];
    const rest = row ? `:${route.path.slice(prefix.length)}` : route.path.slice(prefix.length);
    // an upload makes a row of a related list (RelatedPlan.upload)
    if (!shape.test(rest) || !WRITES.has(route.method) || schema.upload !== undefined) return [];
    const body = schema.body ? (JSON.parse(JSON.stringify(schema.body)) as Record<string, unknown>) : null;
    return [{ module: module.manifest.id, route, path: row ? withIdSlot(route.path) : route.path, body }];
  });
}

/** The record-page members of GET /api/meta for this caller. */
export function describeRecord(model: EntityModel, plan: RecordPlan | undefined, ability: Ability, isAdmin: boolean, label: Label) {
  const def = model.definition;
  const readable = (name: string) => model.byName.get(name) !== undefined && !model.byName.get(name)!.secret && accessFilter(ability, 'read', model.name, name) !== null;
  const strings = model.readable.filter((f) => (f.type === 'string' || f.type === 'text') && readable(f.name)).map((f) => f.name);
  const titleField = def.titleField && readable(def.titleField) ? def.titleField : (LABEL_FIELDS.find((n) => strings.includes(n)) ?? (def.listColumns ?? []).find((c) => strings.includes(c)) ?? null);
  const statusCandidate = def.statusField ?? model.transitions?.field ?? ['status', 'stage'].find((n) => model.byName.get(n)?.type === 'enum');
  const callable = (a: ActionPlan) => ability.can(a.route.access.action, a.route.access.subject) && (!a.route.admin || isAdmin);
  const action = (a: ActionPlan) => ({
    name: a.route.handler,
    label: label(a.module, actionKey(a.route.handler), a.route.label ?? verbOf(a.route.path)),
    method: a.route.method,
    path: a.path,
    summary: a.route.summary,
    confirm: a.route.confirm === true,
    reveals: a.route.reveals ?? null,
    when: a.route.when ?? null,
    body: a.body,
  });
  const t = model.transitions;
  return {
    titleField,
    statusField: statusCandidate && readable(statusCandidate) ? statusCandidate : null,
    summaryFields: (def.summaryFields ?? []).filter(readable),
    transitions: t ? { field: t.field, initial: t.initial, moves: t.moves, reserved: t.reserved ?? [] } : null,
    related: (plan?.related ?? [])
      .filter((r) => ability.can('read', r.child.name) && accessFilter(ability, 'read', r.child.name, r.field.name) !== null)
      .map((r) => ({
        entity: r.child.name,
        field: r.field.name,
        label: r.label ? label(r.label.module, r.label.key, r.label.text) : null,
        path: r.path,
        nested: r.nested,
        upload: r.upload && ability.can('create', r.child.name) ? r.upload : null,
      })),
    rowActions: (plan?.rowActions ?? []).filter(callable).map(action),
    listActions: (plan?.listActions ?? []).filter(callable).map(action),
    createReveals: plan?.createReveals ?? null,
    download: plan?.download ?? null,
    timeline: plan?.timeline && ability.can('read', plan.timeline.entity) ? plan.timeline.path : null,
  };
}

/** "/api/pm/notifications/read-all" → "Read all" */
const verbOf = (path: string) => {
  const verb = path.slice(path.lastIndexOf('/') + 1).replaceAll('-', ' ');
  return verb.charAt(0).toUpperCase() + verb.slice(1);
};
