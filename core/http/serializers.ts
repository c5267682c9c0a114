// Response serialisers compiled once per distinct schema, and only when first
// used. Fastify compiles one per route and status at start-up; with the problem
// responses repeated on every route that was ~200 compilations of a few dozen
// schemas, most of the app's start-up time, mostly for errors rarely sent.
// Each compilation gets only the shared schemas its schema refers to (directly
// or through another): fast-json-stringify resolves every one it is given, and
// given all of them (every entity's, hundreds) a compilation took ~20 ms.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Compile = (route: { schema: unknown }) => (data: unknown) => string;
type BuildSerializer = (externalSchemas: unknown, options: unknown) => Compile;
type Schemas = Record<string, unknown>;

const selector = (SerializerSelector as unknown as () => BuildSerializer)();

/** The $ids `schema` refers to, and those they refer to in turn. */
function referenced(schema: unknown, shared: Schemas, out: Schemas = {}): Schemas {
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.split('#')[0];
        if (id && !Object.hasOwn(out, id) && Object.hasOwn(shared, id)) {
          out[id] = shared[id];
          walk(shared[id]);
        }
      } else walk(value);
    }
  };
  walk(schema);
  return out;
}

export const cachedSerializerFactory: BuildSerializer = (externalSchemas, options) => {
  const shared = (externalSchemas ?? {}) as Schemas;
  const cache = new Map<string, (data: unknown) => string>();
  return (route) => {
    const key = JSON.stringify(route.schema);
    let fn = cache.get(key);
    if (!fn) {
      let compiled: ((data: unknown) => string) | undefined;
      fn = (data) => (compiled ??= selector(referenced(route.schema, shared), options)(route))(data);
      cache.set(key, fn);
    }
    return fn;
  };
};
