// JSON Schemas a manifest holds: a json field's "schema", and the named ones of
// its "schemas" (name → schema), which a field's schema or another named one
// refers to as { "$ref": "<Name>" }. The kernel registers each named schema
// under its name (app.addSchema), so validation and serialisation resolve the
// reference and OpenAPI holds it once, as the component of that name. Here:
// what the loader checks of them, with the named ones known as the app knows them.
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

export type NamedSchemas = Record<string, Record<string, unknown>>;

/** What is wrong with a schema: where in it (JSON pointer segments, unescaped), and why. */
export interface SchemaFault {
  at: string[];
  reason: string;
}

/** Keywords whose values are data, not schemas: a "$ref" in an example is no reference. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** Keywords whose values map names to schemas: a property may be called "default" or "$id". */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']);

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Every string keyword `key` ($ref, $id) in the schema and its sub-schemas, with where it is; `names`: a map of schemas by name. */
function keywords(schema: unknown, key: string, at: string[] = [], names = false): { value: string; at: string[] }[] {
  if (Array.isArray(schema)) return schema.flatMap((s, i) => keywords(s, key, [...at, String(i)]));
  if (!isObject(schema)) return [];
  return Object.entries(schema).flatMap(([k, v]) => {
    if (names) return keywords(v, key, [...at, k]);
    if (k === key && typeof v === 'string') return [{ value: v, at: [...at, k] }];
    return DATA_KEYWORDS.has(k) ? [] : keywords(v, key, [...at, k], SCHEMA_MAPS.has(k));
  });
}

/** The $ids a schema (a route's, say) declares anywhere in it. */
export const declaredIds = (schema: unknown): string[] => keywords(schema, '$id').map((k) => k.value);

/**
 * The faults a schema shows before it is compiled: it is no object, declares
 * an $id of its own (the name under "schemas" is its id: two $ids would be two
 * registrations of one schema), or refers to a name `named` does not hold.
 */
export function shapeFault(schema: unknown, named: NamedSchemas): SchemaFault | undefined {
  if (!isObject(schema)) return { at: [], reason: 'must be a JSON Schema object' };
  const [id] = keywords(schema, '$id');
  if (id) return { at: id.at, reason: 'a schema declares no "$id": a shared one is named under the manifest\'s "schemas" (its name is its id) and referred to as { "$ref": "<Name>" }' };
  const unknown = keywords(schema, '$ref').find((r) => !r.value.startsWith('#') && !Object.hasOwn(named, r.value.split('#')[0]));
  if (unknown) {
    const known = Object.keys(named);
    return { at: unknown.at, reason: `"${unknown.value}" is no schema of this manifest's "schemas" (${known.length ? `it has ${known.join(', ')}` : 'it has none'})` };
  }
  return undefined;
}

/** The fault Ajv finds compiling the schema as the app will, the named schemas known; formats known too, so a "format" keyword counts. */
export function compileFault(schema: Record<string, unknown>, named: NamedSchemas): SchemaFault | undefined {
  try {
    compilerFor(named).compile(schema);
    return undefined;
  } catch (err) {
    return { at: [], reason: `is no valid JSON Schema: ${(err as Error).message}` };
  }
}

/** A json field's schema: its shape, then whether it compiles. */
export const schemaFault = (schema: unknown, named: NamedSchemas): SchemaFault | undefined => shapeFault(schema, named) ?? compileFault(schema as Record<string, unknown>, named);

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const newCompiler = () => addFormats(new Ajv({ strict: false }));
const plain = newCompiler();
const compilers = new WeakMap<NamedSchemas, Ajv>();

function compilerFor(named: NamedSchemas): Ajv {
  if (!Object.keys(named).length) return plain;
  let ajv = compilers.get(named);
  if (!ajv) {
    ajv = newCompiler();
    // not checked against the meta-schema when added: the loader compiles each one on its own first, so a fault names its schema
    for (const [name, schema] of Object.entries(named)) ajv.addSchema({ $id: name, ...schema }, undefined, undefined, false);
    compilers.set(named, ajv);
  }
  return ajv;
}
