// Response serialisers compiled once per distinct schema, and only when first
// used. Fastify compiles one per route and status at start-up; with the problem
// responses repeated on every route that was ~200 compilations of a few dozen
// schemas, most of the app's start-up time, mostly for errors rarely sent.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';

type Compile = (route: { schema: unknown }) => (data: unknown) => string;
type BuildSerializer = (externalSchemas: unknown, options: unknown) => Compile;

const selector = (SerializerSelector as unknown as () => BuildSerializer)();

export const cachedSerializerFactory: BuildSerializer = (externalSchemas, options) => {
  const compile = selector(externalSchemas, options);
  const cache = new Map<string, (data: unknown) => string>();
  return (route) => {
    const key = JSON.stringify(route.schema);
    let fn = cache.get(key);
    if (!fn) {
      let compiled: ((data: unknown) => string) | undefined;
      fn = (data) => (compiled ??= compile(route))(data);
      cache.set(key, fn);
    }
    return fn;
  };
};
