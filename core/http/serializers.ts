// Response serialisers compiled once per distinct schema. Fastify compiles one
// per route and status; with the problem responses repeated on every route that
// is ~200 compilations of a dozen schemas, most of the app's start-up time.
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
    if (!fn) cache.set(key, (fn = compile(route)));
    return fn;
  };
};
