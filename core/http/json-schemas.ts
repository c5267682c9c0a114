// JSON Schemas (TypeBox) derived from an EntityModel: the response shape, the
// create / replace / patch bodies and the list query. Named by $id so OpenAPI
// components read "CatalogProduct", "CatalogProductCreate", ...
import { Type, type TSchema } from 'typebox';
import { entityNoun, isRangeType, pascal, type EntityModel, type FieldModel } from '../model/entity-model.ts';
import { DECIMAL_DEFAULT } from '../model/entity-builder.ts';
import { ME, OP_MEANING, filterOps, filterParam, refersToUser, type FilterOp } from '../crud/list-filters.ts';
import { UUID } from '../ids.ts';
import { embedKey, includable, itemFields } from '../crud/list-shape.ts';

const INT4 = { minimum: -2147483648, maximum: 2147483647 };
const LANG_KEY = '^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$';

export const schemaId = (model: EntityModel, suffix = '') => `${pascal(model.module)}${entityNoun(model.module, model.name)}${suffix}`;

/** Drops undefined options: @fastify/swagger walks every key and fails on an undefined one. */
const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
/** string columns are varchar(maxLength, default 255); text has no limit unless the manifest sets one */
const textLimit = (f: FieldModel) => f.maxLength ?? (f.type === 'string' ? 255 : undefined);

function decimalPattern(f: FieldModel): string {
  const precision = f.precision ?? DECIMAL_DEFAULT.precision;
  const scale = f.scale ?? DECIMAL_DEFAULT.scale;
  const sign = f.minimum !== undefined && f.minimum >= 0 ? '' : '-?';
  const whole = precision - scale > 0 ? `(0|[1-9]\\d{0,${precision - scale - 1}})` : '0';
  return scale > 0 ? `^${sign}${whole}(\\.\\d{1,${scale}})?$` : `^${sign}${whole}$`;
}

/** An example that fits the field's digits: "12.50", or "1.5" where only one whole digit and one decimal fit. */
function decimalExample(f: FieldModel): string {
  const precision = f.precision ?? DECIMAL_DEFAULT.precision;
  const scale = f.scale ?? DECIMAL_DEFAULT.scale;
  const whole = '12'.slice(0, Math.max(1, Math.min(2, precision - scale)));
  const fraction = '50'.slice(0, Math.min(2, scale));
  return precision - scale > 0 ? `${whole}${fraction ? `.${fraction}` : ''}` : `0.${'5'.padEnd(Math.min(2, scale), '0')}`;
}

/**
 * A json field without a manifest schema holds any JSON value: said as the
 * list of JSON types, so a generated client gets a union, not `unknown`.
 * (additionalProperties: the serialiser would write an object as {} without it.)
 */
const anyJson = (nullable: boolean, description?: string) =>
  Type.Unsafe({ type: ['object', 'array', 'string', 'number', 'boolean', ...(nullable ? ['null'] : [])], additionalProperties: true, description: description ?? 'any JSON value' });

type JsonSchema = Record<string, unknown>;

/**
 * A json field's schema with the field's words. A reference to a manifest's
 * named schema ({ "$ref": "<Name>" }) is wrapped in an allOf to carry them:
 * @fastify/swagger drops whatever stands beside a $ref.
 */
function described(schema: JsonSchema, description: string | undefined): JsonSchema {
  if (description === undefined) return schema;
  return '$ref' in schema ? { allOf: [schema], description } : { ...schema, description };
}

/**
 * A json value that may be null: null joins the schema's own type list where it
 * has one, so a refused value gets its schema's errors alone (anyOf would add
 * "must be null" and "must match a schema in anyOf" to each). One without a
 * type (a reference to a named schema) becomes anyOf [schema, null], its
 * description beside the union and a described reference unwrapped.
 */
function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return { ...schema, type: [...new Set([...schema.type, 'null'])] };
  const { description, ...rest } = schema;
  const wrapped = Object.keys(rest).length === 1 && Array.isArray(rest.allOf) && rest.allOf.length === 1;
  return defined({ anyOf: [wrapped ? (rest.allOf as JsonSchema[])[0] : rest, { type: 'null' }], description });
}

/** Schema of one field's value as clients send it (never null here). */
function inputValueSchema(f: FieldModel): TSchema {
  return defined(valueSchema(f));
}

function valueSchema(f: FieldModel): TSchema {
  const d = f.secret ? `${f.description ?? f.label ?? 'secret'} (write-only: stored encrypted, never returned)` : (f.description ?? f.label);
  switch (f.type) {
    case 'string':
    case 'text':
      return Type.String({
        description: d,
        maxLength: textLimit(f),
        minLength: f.minLength,
        pattern: f.pattern,
        format: f.format,
        ...(f.secret ? { writeOnly: true } : {}),
        ...(f.example !== undefined ? { examples: [f.example] } : {}),
      });
    case 'integer':
      return Type.Integer({ description: d, minimum: Math.max(f.minimum ?? INT4.minimum, INT4.minimum), maximum: Math.min(f.maximum ?? INT4.maximum, INT4.maximum) });
    case 'decimal':
      return Type.String({
        description: `${d ?? 'decimal'} (decimal string, precision ${f.precision ?? DECIMAL_DEFAULT.precision}, scale ${f.scale ?? DECIMAL_DEFAULT.scale})`,
        pattern: decimalPattern(f),
        examples: [decimalExample(f)],
      });
    case 'boolean':
      return Type.Boolean({ description: d });
    case 'date':
      return Type.String({ format: 'date', description: d });
    case 'datetime':
      return Type.String({ format: 'date-time', description: d });
    case 'enum':
      return Type.Unsafe({ type: 'string', enum: f.values, description: d });
    case 'json':
      // a named schema describes itself: no stock words beside a reference
      return f.schema ? Type.Unsafe(described(f.schema as JsonSchema, d ?? ('$ref' in (f.schema as JsonSchema) ? undefined : 'a JSON value'))) : anyJson(false, d);
    case 'ref':
      return Type.String({ format: 'uuid', description: d ?? `id of a ${f.entity}` });
  }
}

const OUTPUT_TYPE: Record<FieldModel['type'], Record<string, unknown>> = {
  string: { type: 'string' },
  text: { type: 'string' },
  integer: { type: 'integer' },
  decimal: { type: 'string' },
  boolean: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  enum: { type: 'string' },
  json: {},
  ref: { type: 'string', format: 'uuid' },
};

const SUBSCHEMA = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'];
const SUBSCHEMA_LISTS = ['anyOf', 'allOf', 'oneOf', 'prefixItems', 'items'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties'];
const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A json field's schema as the response serialiser is to read it: an object
 * the schema leaves open (no additionalProperties: any key, in JSON Schema)
 * keeps every key. The serialiser writes only an object's listed properties
 * unless told otherwise, so { "type": "object" } went out as {} whatever was
 * stored, and a client writing back what it read erased the value.
 */
function keepsUnlisted(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  for (const k of SUBSCHEMA) if (isSchema(out[k])) out[k] = keepsUnlisted(out[k]);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((s) => (isSchema(s) ? keepsUnlisted(s) : s));
  for (const k of SUBSCHEMA_MAPS) {
    if (isSchema(out[k])) out[k] = Object.fromEntries(Object.entries(out[k]).map(([name, s]) => [name, isSchema(s) ? keepsUnlisted(s) : s]));
  }
  const object = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object')) || isSchema(out.properties);
  if (object && out.additionalProperties === undefined) out.additionalProperties = true;
  return out;
}

/** `hideable`: a field rule may hide the field, so it may read as null. */
function outputValueSchema(f: FieldModel, hideable: boolean): TSchema {
  const base: Record<string, unknown> = { ...OUTPUT_TYPE[f.type], ...(f.type === 'enum' ? { enum: [...f.values!, ...(f.required ? [] : [null])] } : {}) };
  if (f.type === 'json') {
    if (!f.schema) return anyJson(true, f.label);
    const schema = keepsUnlisted(f.schema as JsonSchema);
    return Type.Unsafe(!f.required || hideable ? { ...orNull(schema), description: f.label } : described(schema, f.label));
  }
  const nullable = !f.required || hideable;
  return Type.Unsafe({ ...base, ...(nullable ? { type: [base.type, 'null'] } : {}), description: hideable && f.required ? `${f.label ?? f.name} (null when a field rule hides it)` : f.label });
}

/** `input`: a write's map, where null removes the language's text. */
function translationsSchema(model: EntityModel, description: string, input = false): TSchema {
  const perField = Object.fromEntries(
    model.translatable.map((f) => {
      const text = Type.String(defined({ maxLength: textLimit(f) }));
      return [
        f.name,
        Type.Optional(
          // additionalProperties: false, or keys that are no language tag would pass: TypeBox's
          // Record only emits patternProperties, which constrains matching keys and nothing else
          Type.Record(Type.String({ pattern: LANG_KEY }), input ? Type.Union([text, Type.Null()]) : text, { maxProperties: 50, additionalProperties: false }),
        ),
      ];
    }),
  );
  return Type.Object(perField, { additionalProperties: false, description });
}

export function outputSchema(model: EntityModel): TSchema {
  const props: Record<string, TSchema> = { id: Type.String({ format: 'uuid' }) };
  if (model.scope === 'company') props.companyId = Type.String({ format: 'uuid' });
  for (const f of model.readable) props[f.name] = outputValueSchema(f, model.fieldRules);
  props.createdAt = Type.String({ format: 'date-time' });
  props.updatedAt = Type.String({ format: 'date-time' });
  props.version = Type.Integer({ description: 'optimistic-lock version; the ETag carries it' });
  for (const [name, f] of Object.entries(model.definition.filters ?? {})) props[name] = Type.Optional(Type.Boolean({ description: `true: ${f.description}; false: the other rows` }));
  if (model.translatable.length) props.translations = Type.Optional(translationsSchema(model, 'every language of each translatable field, with ?translations=true'));
  return Type.Object(props, { $id: schemaId(model), title: model.label, additionalProperties: false });
}

type BodyKind = 'Create' | 'Replace' | 'Patch';

export function bodySchema(model: EntityModel, kind: BodyKind): TSchema {
  const props: Record<string, TSchema> = {};
  for (const f of model.writable) {
    const value = inputValueSchema(f);
    // a secret cannot be read back, so a PUT that omits it keeps the stored one
    const required = (kind === 'Replace' && !f.secret) || (kind === 'Create' && f.required && f.default === undefined && !f.translatable);
    const nullable = !f.required || (f.translatable && kind !== 'Patch');
    const schema = nullable ? (f.type === 'json' ? Type.Unsafe(orNull(value as JsonSchema)) : Type.Union([value, Type.Null()])) : value;
    props[f.name] = required ? schema : Type.Optional(schema);
  }
  if (model.translatable.length) {
    props.translations = Type.Optional(translationsSchema(model, 'text per language for translatable fields (null removes a language); a plain string is stored under Content-Language', true));
  }
  const doc = { Create: 'create', Replace: 'full replacement (PUT): every writable field', Patch: 'partial update (PATCH): only the fields sent change' }[kind];
  return Type.Object(props, { $id: schemaId(model, kind), title: `${model.label} (${doc})`, additionalProperties: false, ...(kind === 'Patch' ? { minProperties: 1 } : {}) });
}

/**
 * A list item: the entity's fields, fewer when `fields=` names some (id always),
 * and the rows `include=` embeds. `published`: the model of an entity whose schema the document holds.
 */
export function listItemSchema(model: EntityModel, published: (entity: string) => EntityModel | undefined): TSchema {
  const full = outputSchema(model) as TSchema & { properties: Record<string, TSchema> };
  const props: Record<string, TSchema> = Object.fromEntries(Object.entries(full.properties).map(([k, v]) => [k, k === 'id' ? v : Type.Optional(v)]));
  const refs = includable(model);
  if (refs.length) {
    const embedded = Object.fromEntries(
      refs.map((f) => {
        const target = published(f.entity!);
        const row = target ? Type.Ref(schemaId(target)) : Type.Object({}, { additionalProperties: true });
        return [
          embedKey(f),
          Type.Optional(Type.Union([row, Type.Null()], { description: `the ${f.entity} ${f.name} points at (include=${f.name}); null when there is none or the caller cannot read it` })),
        ];
      }),
    );
    props._embedded = Type.Optional(Type.Object(embedded, { additionalProperties: false, description: 'rows the include parameter embeds' }));
  }
  return Type.Object(props, { $id: schemaId(model, 'ListItem'), title: `${model.label} (list item: every field unless fields= names some)`, additionalProperties: false });
}

export function listSchema(model: EntityModel): TSchema {
  return Type.Object(
    {
      items: Type.Array(Type.Ref(schemaId(model, 'ListItem'))),
      page: Type.Optional(Type.Integer({ minimum: 1, description: 'the page asked for (absent when paging by cursor)' })),
      size: Type.Integer({ minimum: 1 }),
      total: Type.Integer({ minimum: 0, description: 'rows matching the filters, on every page' }),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor= for the rows after this page (same sort and filters); null after the last row' }),
    },
    { $id: schemaId(model, 'List'), title: `Page of ${model.label}`, additionalProperties: false },
  );
}

export const TRANSLATIONS_PARAM = Type.String({
  pattern: '^(true|false|[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*(,[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*)*)$',
  maxLength: 200,
  description: 'true: add every language of translatable fields; or a comma list of languages',
});

// Query text goes to PostgreSQL as a parameter, and text cannot hold U+0000: without
// this a NUL would surface as a database error (500) instead of a 400.
const NO_NUL = '^[^\\u0000]*$';

const NAME_LIST = '^[a-zA-Z]+(,[a-zA-Z]+)*$';

/** Schema of a filter value in a query string: the field's type, without the bounds a write checks. */
function filterValueSchema(f: FieldModel): TSchema {
  if (f.type === 'json') return Type.String({ pattern: NO_NUL });
  if (refersToUser(f)) return Type.String({ pattern: `^(${ME}|${UUID.source.slice(1, -1).replaceAll('a-f', 'a-fA-F')})$` });
  return inputValueSchema({ ...f, minimum: undefined, maximum: undefined, pattern: f.type === 'string' || f.type === 'text' ? NO_NUL : undefined, minLength: undefined, translatable: false });
}

/** The schema of `field[op]`, described with the syntax docs/api.md documents ("Conventions"). */
function operatorSchema(f: FieldModel, op: FilterOp): TSchema {
  const what = `${f.name}${f.translatable ? " (the text shown in the request's language)" : ''} ${OP_MEANING[op]}`;
  const example = `e.g. ${filterParam(f.name, op)}=${op === 'isNull' ? 'true' : op === 'in' ? `${exampleOf(f)},${exampleOf(f)}` : exampleOf(f)}`;
  const description = `${what}; ${example}`;
  if (op === 'isNull') return Type.Boolean({ description });
  if (op === 'in') return Type.String({ minLength: 1, maxLength: 100_000, pattern: NO_NUL, description });
  if (op === 'contains' || op === 'startsWith') return Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description });
  return Type.Unsafe({ ...filterValueSchema(f), description });
}
const EXAMPLE: Partial<Record<FieldModel['type'], string>> = { integer: '10', decimal: '10.50', date: '2025-01-31', datetime: '2025-01-31T12:00:00Z', ref: '0190a6e4-8f00-7000-8000-000000000000' };
const exampleOf = (f: FieldModel) => (f.type === 'enum' ? f.values![0] : (EXAMPLE[f.type] ?? 'text'));

/**
 * Query parameters of the list route: paging (page or cursor), sort, search, the
 * manifest's filters with their operators, fields and include. `omit`: filters a
 * nested route takes from its path, never from the query.
 */
export function listQuerySchema(model: EntityModel, omit: string[] = []): TSchema {
  const props: Record<string, TSchema> = {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: '1-based page number (default 1); not with cursor' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50, description: 'items per page (1..1000)' })),
    sort: Type.Optional(Type.String({ maxLength: 200, pattern: '^-?[a-zA-Z]+(,-?[a-zA-Z]+)*$', description: `comma list; "-" sorts descending. Sortable: ${[...model.sortable].join(', ')}` })),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4000,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'the nextCursor of the page before: the rows after it, in the same sort (a deep page costs what the first one does); not with page',
      }),
    ),
    fields: Type.Optional(Type.String({ maxLength: 2000, pattern: NAME_LIST, description: `comma list of the item fields to return (id always): ${itemFields(model).join(', ')}` })),
  };
  const refs = includable(model);
  if (refs.length)
    props.include = Type.Optional(
      Type.String({
        maxLength: 1000,
        pattern: NAME_LIST,
        description: `comma list of ref fields whose rows to embed under _embedded (categoryId → _embedded.category), read with the caller's rights: ${refs.map((f) => f.name).join(', ')}`,
      }),
    );
  if (model.searchable.length)
    props.search = Type.Optional(Type.String({ maxLength: 200, pattern: NO_NUL, description: `case-insensitive text in ${model.searchable.map((f) => f.name).join(', ')}` }));
  for (const f of model.filterable) {
    if (omit.includes(f.name)) continue;
    const value = filterValueSchema(f);
    const preset = model.definition.listDefaults?.[f.name];
    const equals = `${f.name} equals the value${refersToUser(f) ? ` (${ME}: the caller)` : ''}`;
    const described = preset === undefined ? equals : `${equals}; without any filter on ${f.name} the list holds only rows where it is ${JSON.stringify(preset)}`;
    props[f.name] = Type.Optional(Type.Unsafe({ ...value, description: described }));
    if (isRangeType(f.type)) {
      props[`${f.name}From`] = Type.Optional(Type.Unsafe({ ...value, description: `${f.name} at least the value (same as ${filterParam(f.name, 'gte')})` }));
      props[`${f.name}To`] = Type.Optional(Type.Unsafe({ ...value, description: `${f.name} at most the value (same as ${filterParam(f.name, 'lte')})` }));
    }
    for (const op of filterOps(f)) props[filterParam(f.name, op)] = Type.Optional(operatorSchema(f, op));
  }
  for (const [name, f] of Object.entries(model.definition.filters ?? {})) props[name] = Type.Optional(Type.Boolean({ description: `true: ${f.description}; false: the other rows` }));
  if (model.translatable.length) props.translations = Type.Optional(TRANSLATIONS_PARAM);
  return Type.Object(props, { additionalProperties: false });
}
