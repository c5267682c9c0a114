// Boundary values, every one of them, not a sample: each field of each body at
// its limits (dates: year 0, the last day of 9999, leap days, lowercase "t"/"z",
// far offsets, nanoseconds; the longest text in 1-, 2- and 4-byte characters;
// the extreme integers and decimals), and each date filter of each list, the
// rest of the request valid. Random runs meet these only now and then; a defect
// they show must fail every run.
import { fillPath, type ApiOperation, type Schema } from '../api/describe.ts';
import { exampleOf } from '../api/examples.ts';
import { EDGE_DATES, EDGE_DATETIMES } from './arbitraries.ts';
import type { Recorder } from './recorder.ts';

const EDGES: Record<string, string[]> = {
  date: [...EDGE_DATES, '2023-02-29', '2024-02-30'],
  'date-time': [...EDGE_DATETIMES, '2024-02-29T12:00:00z', '2024-02-29 12:00:00Z', '2024-02-29T12:00:00+00:00', '2024-02-29T24:00:00Z'],
};

/** The format of a (possibly nullable) schema: date, date-time or none. */
function formatOf(schema: Schema, resolve: (s: Schema) => Schema): string | undefined {
  const s = resolve(schema);
  if (s.anyOf) return s.anyOf.map((x: Schema) => formatOf(x, resolve)).find(Boolean);
  return s.format in EDGES ? s.format : undefined;
}

/** The non-null branch of a nullable schema. */
const solid = (schema: Schema, resolve: (s: Schema) => Schema): Schema => {
  const s = resolve(schema);
  return s.anyOf ? solid(s.anyOf.find((x: Schema) => resolve(x).type !== 'null') ?? {}, resolve) : s;
};

/** Values at a field's limits: dates, the longest text in 1-, 2- and 4-byte characters, the extreme integers and decimals. */
function edgesOf(schema: Schema, field: { type?: string; precision?: number; scale?: number } | undefined, resolve: (s: Schema) => Schema): unknown[] {
  const format = formatOf(schema, resolve);
  if (format) return EDGES[format];
  const s = solid(schema, resolve);
  if (field?.type === 'decimal') {
    const [p, d] = [field.precision ?? 12, field.scale ?? 2];
    return [`${'9'.repeat(p - d)}${d ? `.${'9'.repeat(d)}` : ''}`, `0.${'0'.repeat(Math.max(0, d - 1))}1`];
  }
  if (s.type === 'integer') return [s.minimum ?? -(2 ** 31), s.maximum ?? 2 ** 31 - 1];
  if (s.type === 'string' && !s.pattern && !s.format && !s.enum && s.maxLength) return ['x', 'é', '😀'].map((c) => c.repeat(s.maxLength));
  return [];
}

export async function boundaries(rec: Recorder, ops: ApiOperation[], seed: number): Promise<void> {
  const { api, pool, tokens } = rec.world;
  const first = (entity: string) => pool.get(entity)?.[0];
  const send = (op: ApiOperation, path: string, query: string, body?: Record<string, unknown>) =>
    rec.send(
      `${op.id} boundaries`,
      {
        fault: 'none',
        method: op.method,
        path,
        query,
        headers: {},
        caller: op.auth === 'platform' ? 'operator' : 'admin',
        token: op.auth === 'platform' ? tokens.operator : tokens.admin,
        ...(body ? { body: { text: JSON.stringify(body), type: 'application/json' } } : {}),
      },
      op,
    );
  for (const op of ops.filter((o) => o.auth !== 'public' && o.kind !== 'delete')) {
    const row = op.idParam ? first(op.entity!) : undefined;
    const values = Object.fromEntries(op.pathParams.map((p) => [p, row?.pathValues[p] ?? first(op.addresses[p])?.id ?? '']));
    if (Object.values(values).some((v) => !v)) continue;
    const path = fillPath(op.path, values);
    for (const p of op.params.filter((x) => x.in === 'query')) {
      for (const edge of EDGES[formatOf(p.schema, api.resolve) ?? ''] ?? []) await send(op, path, `${p.name}=${encodeURIComponent(edge)}`);
    }
    if (!op.body) continue;
    const props = Object.entries(api.resolve(op.body).properties ?? {}) as Array<[string, Schema]>;
    for (const [name, schema] of props) {
      for (const edge of edgesOf(schema, op.entity ? api.model(op.entity)?.byName.get(name) : undefined, api.resolve)) {
        const body = exampleOf(api, op.body, {
          marker: `bv${(seed >>> 0).toString(36)}`,
          seed,
          entity: op.entity,
          counter: { n: rec.requests },
          ref: (target) => (target ? first(target)?.id : undefined),
        }) as Record<string, unknown>;
        await send(op, path, '', { ...body, [name]: edge });
      }
    }
  }
}
