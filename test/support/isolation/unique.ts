// "Exists elsewhere" must not show through a unique key either: an outsider who
// creates a row with the victim's unique values (its code, SKU, e-mail, name)
// gets the answer a fresh value gets, because the key is per tenant (schema) or
// per company. Bodies refer to the caller's own rows, so both creates are valid.
import type { FastifyInstance } from 'fastify';
import type { ApiOperation } from '../api/describe.ts';
import { exampleOf } from '../api/examples.ts';
import type { Scene } from './scene.ts';
import type { Variant } from './variants.ts';

export interface UniqueProbe {
  fields: string[];
  victim: { status: number; code?: string };
  fresh: { status: number; code?: string };
  request: string;
}

/** Unique fields of an entity a body can set: single ones and composite keys without references. */
function uniqueFields(s: Scene, entity: string): string[] {
  const model = s.api.model(entity);
  if (!model) return [];
  const single = model.writable.filter((f) => f.unique && f.type !== 'ref').map((f) => f.name);
  const composite = (model.definition.unique ?? []).filter((key) => key.every((n) => model.byName.get(n)?.type !== 'ref')).flat();
  return [...new Set([...single, ...composite])];
}

export async function uniqueProbe(app: FastifyInstance, s: Scene, op: ApiOperation, v: Variant, seed: number): Promise<UniqueProbe | undefined> {
  const entity = op.entity;
  if (!entity || !op.body || op.pathParams.length || s.api.creator(entity) !== op || !v.foreign?.(s, entity)) return undefined;
  const victimRow = s.victim.first(entity);
  const fields = uniqueFields(s, entity).filter((f) => typeof victimRow?.body[f] === 'string');
  if (!victimRow || !fields.length) return undefined;
  const own = v.mirror(s);
  const body = (marker: string) => exampleOf(s.api, op.body!, { marker, seed, entity, counter: { n: 0 }, ref: (target) => (target ? own.first(target)?.id : undefined) }) as Record<string, unknown>;
  const token = v.token(s, op);
  const send = (payload: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: op.path, payload, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(v.headers?.(s) ?? {}) } });
  const taken = { ...body(`uq${seed.toString(36)}a`), ...Object.fromEntries(fields.map((f) => [f, victimRow.body[f]])) };
  const [a, b] = [await send(taken), await send(body(`uq${seed.toString(36)}b`))];
  const code = (r: { statusCode: number; json(): { code?: string } }) => (r.statusCode >= 400 ? r.json().code : undefined);
  return { fields, victim: { status: a.statusCode, code: code(a) }, fresh: { status: b.statusCode, code: code(b) }, request: `POST ${op.path} ${JSON.stringify(taken).slice(0, 300)}` };
}
