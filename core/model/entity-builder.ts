// Turns manifest entities into MikroORM EntitySchemas at runtime (no decorators).
// Every entity gets a UUIDv7 id, createdAt, updatedAt and an optimistic-lock
// version; company-scoped ones also get companyId, filled from the request.
import { EntitySchema } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { Manifest, ManifestField } from '../manifest/format.ts';
import { DECIMAL_DEFAULT, STRING_MAX_LENGTH } from '../manifest/field-rules.ts';
import { describeModel, snake, tableName, type EntityModel } from './entity-model.ts';
import { defaultSortIndex, isListed } from './list-plan.ts';

export { DECIMAL_DEFAULT };
const DELETE_RULES = { restrict: 'restrict', cascade: 'cascade', setNull: 'set null' } as const;

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * The column default as SQL. MikroORM turns a `default` into SQL by wrapping
 * strings in quotes without escaping them ("it's" breaks the DDL), so the
 * literal is built here; `default` keeps the runtime value for em.create.
 */
function defaultSql(f: ManifestField): string {
  const d = f.default;
  if (f.type === 'json') return quote(JSON.stringify(d));
  return typeof d === 'string' ? quote(d) : String(d);
}

function property(name: string, f: ManifestField, schemas: Map<string, EntitySchema>): Record<string, unknown> {
  const nullable = !f.required;
  const common: Record<string, unknown> = { nullable, fieldName: snake(name) };
  if (f.default !== undefined && f.default !== null && f.type !== 'ref' && !f.translatable) {
    common.default = f.default;
    common.defaultRaw = defaultSql(f);
  }
  if (f.index) common.index = true;
  if (f.translatable) return { ...common, type: 'json' };
  // ciphertext is longer than the text it holds: maxLength bounds the text sent
  if (f.secret) return { ...common, type: 'text' };
  switch (f.type) {
    case 'string':
      return { ...common, type: 'string', length: f.maxLength ?? STRING_MAX_LENGTH };
    case 'text':
      return { ...common, type: 'text' };
    case 'integer':
      return { ...common, type: 'integer' };
    case 'decimal':
      return { ...common, type: 'decimal', precision: f.precision ?? DECIMAL_DEFAULT.precision, scale: f.scale ?? DECIMAL_DEFAULT.scale };
    case 'boolean':
      return { ...common, type: 'boolean' };
    case 'date':
      return { ...common, type: 'date' };
    case 'datetime':
      return { ...common, type: 'datetime' };
    case 'enum':
      return { ...common, enum: true, items: f.values };
    case 'json':
      return { ...common, type: 'json' };
    case 'ref':
      return {
        ...common,
        kind: 'm:1',
        entity: () => schemas.get(f.entity!)!,
        mapToPk: true,
        deleteRule: DELETE_RULES[f.onDelete ?? 'restrict'],
        index: true,
      };
  }
}

/** Builds every module's entities; refs across modules resolve lazily by name. */
export function buildEntityModels(manifests: Manifest[]): EntityModel[] {
  const schemas = new Map<string, EntitySchema>();
  const models: EntityModel[] = [];
  for (const manifest of manifests) {
    for (const entity of manifest.entities ?? []) {
      const properties: Record<string, unknown> = {
        id: { type: 'uuid', primary: true, onCreate: () => uuidv7() },
      };
      if (entity.scope === 'company') properties.companyId = { type: 'uuid', fieldName: 'company_id', index: true };
      for (const [name, f] of Object.entries(entity.fields)) properties[name] = property(name, f, schemas);
      properties.createdAt = { type: 'datetime', fieldName: 'created_at', onCreate: () => new Date() };
      properties.updatedAt = { type: 'datetime', fieldName: 'updated_at', onCreate: () => new Date(), onUpdate: () => new Date() };
      properties.version = { type: 'integer', version: true, fieldName: 'version' };
      const scopeKey = entity.scope === 'company' ? ['companyId'] : [];
      // Unnamed: MikroORM names them <table>_<columns>_unique, hash-shortened past
      // PostgreSQL's 63 characters (a longer name would be truncated by the server
      // and then differ from the model in every later schema diff).
      const uniques = [
        ...Object.entries(entity.fields)
          .filter(([, f]) => f.unique)
          .map(([name]) => [...scopeKey, name]),
        ...(entity.unique ?? []).map((key) => [...new Set([...scopeKey, ...key])]),
      ].map((props) => ({ properties: props }));
      const schema = new EntitySchema({ name: entity.name, tableName: tableName(manifest.id, entity), schema: '*', properties: properties as never, uniques: uniques as never });
      schemas.set(entity.name, schema);
      const model = describeModel(manifest, entity, schema);
      // the default list reads its first page off an index (see list-plan.ts)
      const sortIndex = defaultSortIndex(
        model,
        isListed(manifest, entity.name),
        uniques.map((u) => u.properties),
      );
      // `columns` only for a descending column: MikroORM reads an all-ascending index back without them
      // and would otherwise recreate it on every migration
      if (sortIndex) schema.addIndex({ properties: sortIndex.map((c) => c.name), ...(sortIndex.some((c) => c.sort) ? { columns: sortIndex } : {}) } as never);
      models.push(model);
    }
  }
  const byName = new Map(models.map((m) => [m.name, m]));
  for (const g of manifests.flatMap((m) => (m.permissions ?? []).flatMap((p) => p.grants))) {
    if (!g.fields) continue;
    for (const subject of [g.subject].flat()) {
      if (subject === 'all') for (const m of models) m.fieldRules = true;
      else if (byName.has(subject)) byName.get(subject)!.fieldRules = true;
    }
  }
  for (const parent of models) {
    for (const field of parent.fields) {
      if (!field.sum) continue;
      const child = byName.get(field.sum.entity)!;
      const rollup = { parent: parent.name, field, child: child.name, by: field.sum.by, summed: child.byName.get(field.sum.field)! };
      parent.rollups.push(rollup);
      child.feeds.push(rollup);
    }
  }
  return models;
}
