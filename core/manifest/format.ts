// The manifest format, declared once. The JSON Schema published for editors
// (manifests/manifest.schema.json) is generated from this file by
// `npm run manifest:schema`, and the loader validates against the same object.
import { Type, type Static } from 'typebox';

const Name = (pattern: string, description: string) => Type.String({ pattern, description });
const ModuleId = Name('^[a-z][a-z0-9-]{1,30}$', 'module id: lower-case letters, digits and dashes');
const EntityName = Name('^[A-Z][A-Za-z0-9]{1,40}$', 'entity name: singular PascalCase');
const FieldName = Name('^[a-z][A-Za-z0-9]{0,40}$', 'field name: camelCase');
const PermissionCode = Name('^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*:[a-z][a-z0-9-]*$', 'permission code: <area>:<name>:<verb>');
const ApiPath = Name('^(/([a-z0-9_{}-]+|:[a-z][A-Za-z0-9]*))+$', 'URL path; :param segments (camelCase) for parameters');
const OneOrMany = (s: ReturnType<typeof Type.String>) => Type.Union([s, Type.Array(s, { minItems: 1 })]);

export const FieldTypes = ['string', 'text', 'integer', 'decimal', 'boolean', 'date', 'datetime', 'enum', 'json', 'ref'] as const;

export const FieldSchema = Type.Object(
  {
    type: Type.Enum(FieldTypes, { description: 'storage and API type' }),
    label: Type.Optional(Type.String({ description: 'human label for forms and list columns' })),
    description: Type.Optional(Type.String()),
    required: Type.Optional(Type.Boolean({ description: 'must be given on create and PUT; never null' })),
    default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { description: 'value stored when a create omits the field' })),
    maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 10485760 })),
    minLength: Type.Optional(Type.Integer({ minimum: 0 })),
    pattern: Type.Optional(Type.String({ description: 'string: regular expression the value must match' })),
    format: Type.Optional(Type.Enum(['uri', 'email', 'hostname'], { description: 'string: a JSON Schema format the value must have' })),
    schema: Type.Optional(
      Type.Unknown({
        description: 'json: the JSON Schema the value must meet (documented in OpenAPI, checked on every write); { "$ref": "<Name>" } names one of the manifest\'s "schemas"',
      }),
    ),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    precision: Type.Optional(Type.Integer({ minimum: 1, maximum: 38, description: 'decimal: total digits (default 12)' })),
    scale: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'decimal: digits after the point (default 2)' })),
    currency: Type.Optional(
      Type.String({
        pattern: '^[a-z][A-Za-z0-9]{0,40}(\\.[a-z][A-Za-z0-9]{0,40})?$',
        description:
          'integer/decimal: an amount of money, whose ISO 4217 code is in this string field: of the entity ("currency") or of the entity of this module a ref points at ("quoteId.currency"). Analytics never adds amounts of different currencies: a sum, average, minimum or maximum comes out per currency',
      }),
    ),
    values: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1, uniqueItems: true, description: 'enum: allowed values' })),
    valueLabels: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }), { description: 'enum: how each value reads on pages (translatable); a value without one reads as itself' })),
    schemaFrom: Type.Optional(
      Type.Object(
        {
          path: Type.String({ pattern: '^/api/', description: 'a GET route answering { items }' }),
          match: Type.String({ pattern: '^[a-z][A-Za-z0-9]{0,40}$', description: "the field of the row naming the item (a report's type)" }),
          key: Type.Optional(Type.String({ description: 'the item member it is matched with (default "name")' })),
        },
        { additionalProperties: false, description: "console hint, json: the form of the value is the JSON Schema under this field's name in the matching item (a report's parameters, by its type)" },
      ),
    ),
    entity: Type.Optional(Type.String({ description: 'ref: the referenced entity name' })),
    onDelete: Type.Optional(
      Type.Union([Type.Literal('restrict'), Type.Literal('cascade'), Type.Literal('setNull')], { description: 'ref: what deleting the referenced row does (default restrict: 409)' }),
    ),
    unique: Type.Optional(Type.Boolean({ description: 'unique within the scope (company or tenant)' })),
    index: Type.Optional(Type.Boolean()),
    translatable: Type.Optional(Type.Boolean({ description: 'string/text stored per language' })),
    filter: Type.Optional(Type.Boolean({ description: 'offered as a list query parameter' })),
    sort: Type.Optional(Type.Boolean({ description: 'allowed in the list sort parameter' })),
    search: Type.Optional(Type.Boolean({ description: 'matched by the list search parameter' })),
    internal: Type.Optional(Type.Boolean({ description: 'stored but never read or written through the API' })),
    secret: Type.Optional(
      Type.Boolean({ description: 'string/text: write-only (never in a response), encrypted at rest with the configured SECRET_KEY (AES-256-GCM); a PUT may omit it to keep the stored value' }),
    ),
    readOnly: Type.Optional(Type.Boolean({ description: 'in responses, never accepted in a request body (set by the module or its default)' })),
    related: Type.Optional(Type.Boolean({ description: "console hint, ref: false: the rows are not listed on the referenced record's page (a user's notifications on the user's page)" })),
    group: Type.Optional(
      Type.String({ minLength: 1, maxLength: 60, description: 'console hint: the section of the record page and form the field is shown in (a heading, translatable); fields without one come first' }),
    ),
    widget: Type.Optional(
      Type.Union(
        ['text', 'textarea', 'markdown', 'number', 'decimal', 'checkbox', 'date', 'datetime', 'select', 'reference', 'password', 'color', 'key-value', 'json', 'cron'].map((w) => Type.Literal(w)),
        {
          description:
            "console hint: the form's input; default by type. textarea/markdown: several lines for a string; key-value: rows of keys and values for a json object of scalars; password: a masked input; cron: a schedule picked from presets (daily, weekly, monthly) for a cron string",
        },
      ),
    ),
    example: Type.Optional(
      Type.String({ description: 'string/text: a valid value shown in the OpenAPI document (examples), for values whose content means something a schema cannot say (a cron expression)' }),
    ),
    formula: Type.Optional(
      Type.String({
        minLength: 1,
        description: "decimal: computed on every write from the row's other fields (+ - * / and parentheses, exact decimal arithmetic), rounded half-up to the field's scale; read-only",
      }),
    ),
    sequence: Type.Optional(
      Type.Object(
        {
          per: Type.Optional(Type.String({ description: "a field of the entity (a ref, usually): each of its values numbers its own rows (a project's tasks: 1, 2, 3…)" })),
        },
        {
          additionalProperties: false,
          description:
            'integer: numbered 1, 2, 3… on create (max + 1 within the group, per company for company-scoped entities), race-free: concurrent creates of one group take turns; read-only. Declare a composite "unique" of the group and this field so its index serves the numbering',
        },
      ),
    ),
    sum: Type.Optional(
      Type.Object(
        {
          entity: Type.String({ description: 'the child entity' }),
          by: Type.String({ description: "the child's ref field pointing at this entity" }),
          field: Type.String({ description: "the child's decimal field summed" }),
        },
        { additionalProperties: false, description: 'decimal: the sum of a field over the rows pointing at this one, recomputed in the same transaction as every write of such a row; read-only' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const TransitionsSchema = Type.Object(
  {
    field: Type.String({ description: 'the enum field holding the state' }),
    initial: Type.Array(Type.String(), { minItems: 1, description: 'states a row may be created in' }),
    moves: Type.Record(Type.String(), Type.Array(Type.String()), { description: 'state → the states a write may move it to; any other change of the field is 422 INVALID_TRANSITION' }),
    lockedIn: Type.Optional(Type.Array(Type.String(), { description: 'states in which a row (and rows addressed through its path) can no longer be changed or deleted: 409 STATE_LOCKED' })),
    reserved: Type.Optional(Type.Array(Type.String(), { description: 'states only module code (a custom handler) may move a row into, never a generated route' })),
  },
  { additionalProperties: false },
);

export const EntitySchema = Type.Object(
  {
    name: EntityName,
    label: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    scope: Type.Union([Type.Literal('tenant'), Type.Literal('company')], { description: 'tenant: one set per tenant; company: rows belong to the request company' }),
    table: Type.Optional(Name('^[a-z][a-z0-9_]{1,50}$', 'table name (default: <module>_<plural snake case>)')),
    fields: Type.Record(Type.String(), FieldSchema, { description: 'fields by camelCase name' }),
    unique: Type.Optional(Type.Array(Type.Array(FieldName, { minItems: 2 }), { description: 'composite unique keys' })),
    listColumns: Type.Optional(Type.Array(FieldName, { description: 'console hint: columns of the list page' })),
    defaultSort: Type.Optional(
      Type.String({
        description:
          'sort applied when a list asks for none, e.g. "name,-createdAt" (default "-createdAt": newest first); ties are ordered by id. An index serves it (company, then these columns) unless it names a translatable field, whose order depends on the reader\'s language and sorts every row',
      }),
    ),
    transitions: Type.Optional(TransitionsSchema),
    titleField: Type.Optional(
      Name(
        '^[a-z][A-Za-z0-9]{0,40}$',
        'console hint: the field naming a row in headings and references (default: name, title, label, subject, number, code, sku, key or email, else the first list column)',
      ),
    ),
    statusField: Type.Optional(
      Type.String({
        pattern: '^[a-z][A-Za-z0-9]{0,40}$',
        description: "console hint: the enum field shown as a badge in the record page's header (default: the transitions' field, else an enum named status or stage)",
      }),
    ),
    summaryFields: Type.Optional(Type.Array(FieldName, { maxItems: 4, description: "console hint: two to four key facts in the record page's header" })),
    related: Type.Optional(
      Type.Array(
        Type.Object(
          {
            entity: EntityName,
            field: Type.Optional(FieldName),
            label: Type.Optional(Type.String({ minLength: 1, description: "the section heading (translatable); default: the entity's label" })),
            hidden: Type.Optional(Type.Boolean({ description: 'not shown on the record page' })),
          },
          { additionalProperties: false },
        ),
        {
          description:
            'console hint: the record page\'s related lists (every entity with a listable ref to this one), in this order first, renamed or hidden; "field" picks one ref when the entity has several',
        },
      ),
    ),
    listDefaults: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
        description:
          'filter field → value a list applies when its query names no filter on that field (e.g. { "archived": false }: archived rows are listed only when asked, ?archived=true); the field must be "filter": true',
      }),
    ),
    filters: Type.Optional(
      Type.Record(
        Name('^[a-z][A-Za-z0-9]{0,40}$', 'the list query parameter (camelCase), e.g. overdue'),
        Type.Object(
          {
            description: Type.String({ minLength: 1, description: 'what ?<name>=true lists, for the OpenAPI parameter' }),
            where: Type.Record(Type.String(), Type.Unknown(), {
              description:
                'a condition in grant syntax ($exists included); "${today}" is the current date on the tenant\'s clock (its time zone), "${user.id}" the caller. ?<name>=true lists the rows meeting it, false the others',
            }),
          },
          { additionalProperties: false },
        ),
        { description: 'named list filters: boolean query parameters standing for a condition (overdue: dueDate before today and not done)' },
      ),
    ),
    audit: Type.Optional(Type.Boolean({ description: "record every create, update and delete in the module's auditLog entity, in the same transaction" })),
    events: Type.Optional(
      Type.Boolean({ description: 'emit <module>.<entity>.<created|updated|deleted> on every write (default true); false for logs whose rows are no news to anyone (a delivery log)' }),
    ),
  },
  { additionalProperties: false },
);

const GrantSchema = Type.Object(
  {
    action: OneOrMany(Type.String({ pattern: '^[a-z][a-zA-Z]*$' })),
    subject: OneOrMany(Type.String({ pattern: '^([A-Z][A-Za-z0-9]*|all)$' })),
    conditions: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'CASL conditions on scalar fields; "${user.id}" and "${user.companyIds}" bind the caller' })),
    fields: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'the grant covers only these fields: others read as null and cannot be written through it' })),
    inverted: Type.Optional(Type.Boolean({ description: 'a "cannot": it bounds every grant of the codes a caller holds, whichever code grants it' })),
  },
  { additionalProperties: false },
);

export const PermissionSchema = Type.Object(
  {
    code: PermissionCode,
    description: Type.String({ minLength: 1 }),
    grants: Type.Array(GrantSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export const CrudRouteSchema = Type.Object(
  {
    entity: Type.String({
      description:
        "generate list, read, create, PUT, PATCH and delete for this entity; another module's entity (of a module this one depends on) too, on a path without parameters: its grants, hooks and events apply unchanged",
    }),
    path: ApiPath,
    idParam: Type.Optional(Type.String({ pattern: '^[a-z][A-Za-z0-9]*$', description: 'name of the item path parameter (default "id"), e.g. lineId for /quotes/:quoteId/lines/:lineId' })),
    operations: Type.Optional(Type.Array(Type.Enum(['list', 'read', 'create', 'replace', 'update', 'delete']), { uniqueItems: true, description: 'default: all six' })),
    admin: Type.Optional(Type.Boolean({ description: 'authenticate → requireRole → requireAdmin before the ability check' })),
    lists: Type.Optional(
      Type.Array(
        Type.Object(
          {
            path: ApiPath,
            by: Type.Optional(Type.String({ description: 'a ref field of the entity; the path names it as :<field> and the list holds only rows pointing at that row' })),
            where: Type.Optional(
              Type.Record(Type.String(), Type.Unknown(), {
                description: 'instead of "by": a condition in grant syntax the listed rows meet, "${user.id}" the caller (the caller\'s tasks), within their read scope',
              }),
            ),
            name: Type.Optional(Type.String({ pattern: '^[A-Z][A-Za-z0-9]{1,40}$', description: 'with "where": what the sub-set is, in the operationId (<module>List<Entities><Name>)' })),
            summary: Type.Optional(Type.String({ description: 'what the list holds, in words (OpenAPI summary)' })),
          },
          { additionalProperties: false },
        ),
        { description: 'further list routes over a sub-set, e.g. /api/emails/company/:companyId, or the rows meeting a condition (/api/ai/tasks/my-tasks)' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const CustomRouteSchema = Type.Object(
  {
    method: Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    path: ApiPath,
    handler: Type.String({ pattern: '^[a-z][A-Za-z0-9]*$', description: 'export of plugins/<module>/index.ts' }),
    summary: Type.String(),
    access: Type.Object({ action: Type.String(), subject: Type.String() }, { additionalProperties: false }),
    admin: Type.Optional(Type.Boolean()),
    label: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 60,
        description: 'console: the button of an action on a row (POST|PUT <collection>/:id/<verb>) or on a list (POST <collection>/<verb>); default: the verb. Translatable',
      }),
    ),
    confirm: Type.Optional(Type.Boolean({ description: 'console: the action asks for a confirmation first (it cannot be undone, or takes something away)' })),
    reveals: Type.Optional(
      Type.String({
        pattern: '^[a-z][A-Za-z0-9]{0,40}$',
        description: "console: a field of the action's answer shown once, with a copy button and a warning that it will not be shown again (a new API key)",
      }),
    ),
    when: Type.Optional(
      Type.Record(Type.String({ pattern: '^[a-z][A-Za-z0-9]{0,40}$' }), Type.Array(Type.Union([Type.String(), Type.Boolean(), Type.Null()]), { minItems: 1 }), {
        description: 'console: the row action is offered only on rows whose fields hold one of these values ({ "status": ["new", "qualified"] }); the route still decides',
      }),
    ),
    hidden: Type.Optional(Type.Boolean({ description: 'console: not offered as an action (an action a page of the module offers itself)' })),
    auth: Type.Optional(
      Type.String({ pattern: '^[a-z][a-z0-9-]*$', description: 'an authenticator a plugin exports (e.g. API-key clients): the route accepts its credentials only, not user tokens' }),
    ),
    schema: Type.Optional(
      Type.Object(
        {
          params: Type.Optional(Type.Unknown()),
          querystring: Type.Optional(Type.Unknown()),
          body: Type.Optional(Type.Unknown()),
          response: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        },
        {
          additionalProperties: false,
          description: 'JSON Schemas of the route; usually declared in the handler instead (handler() of core/plugin-api.ts, TypeBox), which types its request. Not both.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const EventSchema = Type.Object(
  {
    name: Name('^[a-z][a-z0-9-]*\\.[a-z][a-z0-9-]*$', '<entity>.<action> in lower case (lead.converted); the event type is <module>.<name>'),
    entity: Type.Optional(EntityName),
    description: Type.String({ minLength: 1 }),
    payload: Type.Unknown({ description: 'JSON Schema of the payload; module code emitting the event is held to it' }),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'payload version (default 1): raise it when the payload changes incompatibly' })),
  },
  { additionalProperties: false },
);

const MenuSchema = Type.Object(
  {
    label: Type.String(),
    path: Type.String({ pattern: '^/' }),
    permission: PermissionCode,
    icon: Type.Optional(Type.String()),
    entity: Type.Optional(
      Type.String({
        pattern: '^[A-Z][A-Za-z0-9]{1,40}$',
        description: "console: the entity whose list, detail and form pages this entry opens; default: the entity whose generated routes' path is /api followed by this path",
      }),
    ),
    page: Type.Optional(
      Type.Literal('translations', {
        description: "console: a page the console draws itself; translations: the interface texts of this module (the caller's grants on Translation decide what they may change)",
      }),
    ),
    admin: Type.Optional(
      Type.Boolean({
        description:
          "console: the page is for full-access users only (it passes requireAdmin, as a route's \"admin\"): shown in their menu only, 403 for others. An entity's pages take it from the entity's routes",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    id: ModuleId,
    name: Type.String({ minLength: 1 }),
    version: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$', description: 'semantic version of the module' }),
    description: Type.Optional(Type.String()),
    dependsOn: Type.Optional(Type.Array(ModuleId, { uniqueItems: true })),
    subjects: Type.Optional(
      Type.Array(Type.String({ pattern: '^[A-Z][A-Za-z0-9]{1,40}$' }), { uniqueItems: true, description: 'permission subjects that are no entity (a page, a report), for grants and custom routes' }),
    ),
    permissions: Type.Optional(Type.Array(PermissionSchema)),
    schemas: Type.Optional(
      Type.Record(Name('^[A-Z][A-Za-z0-9]{1,60}$', "schema name: PascalCase, starting with the module's own (BiAnalyticsQuery of module bi)"), Type.Record(Type.String(), Type.Unknown()), {
        description:
          'named JSON Schemas, declared once: a json field\'s "schema" (or another of these) names one as { "$ref": "<Name>" }, module code as Type.Ref(\'<Name>\') in a handler\'s schema; each is the OpenAPI component of its name',
      }),
    ),
    entities: Type.Optional(Type.Array(EntitySchema)),
    routes: Type.Optional(Type.Array(Type.Union([CrudRouteSchema, CustomRouteSchema]))),
    menu: Type.Optional(Type.Array(MenuSchema)),
    events: Type.Optional(
      Type.Array(EventSchema, { description: 'domain events module code emits (ctx.emit); every generated create, update and delete emits <module>.<entity>.<created|updated|deleted> undeclared' }),
    ),
    auditLog: Type.Optional(
      Type.String({ pattern: '^[A-Z][A-Za-z0-9]{1,40}$', description: 'entity of this module the kernel writes audit records to (fields entity, entityId, action, userId, changes, at)' }),
    ),
  },
  { additionalProperties: false, $id: 'https://plinth.dev/schemas/manifest-1.json', title: 'Plinth module manifest' },
);

export type Manifest = Static<typeof ManifestSchema>;
export type ManifestEntity = Static<typeof EntitySchema>;
export type ManifestField = Static<typeof FieldSchema>;
export type ManifestPermission = Static<typeof PermissionSchema>;
export type CrudRoute = Static<typeof CrudRouteSchema>;
export type CustomRoute = Static<typeof CustomRouteSchema>;
export type Transitions = Static<typeof TransitionsSchema>;
export type ManifestEvent = Static<typeof EventSchema>;
