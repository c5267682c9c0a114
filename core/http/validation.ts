// Two Ajv instances: bodies are validated strictly (no type coercion, unknown
// properties rejected, nothing stripped: Fastify's default would turn
// { name: 5, bogus: 1 } into { name: "5" }); query strings, params and headers
// arrive as text and are coerced to the declared types.
import { Ajv, type AnySchema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function installValidators(app: FastifyInstance, shared: () => AnySchema[]): void {
  const make = (coerce: boolean) => {
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: coerce, useDefaults: coerce, removeAdditional: false }));
    for (const s of shared()) ajv.addSchema(s);
    return ajv;
  };
  let body: Ajv | undefined;
  let text: Ajv | undefined;
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? (body ??= make(false)) : (text ??= make(true));
    return ajv.compile(schema as AnySchema);
  });
}
