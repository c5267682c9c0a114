// Turns manifest entities into MikroORM EntitySchemas at runtime (no decorators).
// Every entity gets a UUIDv7 id, createdAt, updatedAt and an optimistic-lock
// version; company-scoped ones also get companyId, filled from the request.
import { EntitySchema } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { Manifest, ManifestField } from '../manifest/schema.ts';
import { describeModel, snake, tableName, type EntityModel } from './entity-model.ts';

const DELETE_RULES = { restrict: 'restrict', cascade: 'cascade', setNull: 'set null' } as const;
export const DECIMAL_DEFAULT = { precision: 12, scale: 2 };

function property(name: string, f: ManifestField, schemas: Map<string, EntitySchema>): Record<string, unknown> {
  const nullable = !f.required;
  const common: Record<string, unknown> = { nullable, fieldName: snake(name) };
  if (f.default !== undefined && f.default !== null && f.type !== 'ref') {
    common.default = f.type === 'json' ? JSON.stringify(f.default) : f.default;
  }
  if (f.index) common.index = true;
  if (f.translatable) return { ...common, type: 'json' };
  switch (f.type) {
    case 'string': return { ...common, type: 'string', length: f.maxLength ?? 255 };
    case 'text': return { ...common, type: 'text' };
    case 'integer': return { ...common, type: 'integer' };
    case 'decimal': return { ...common, type: 'decimal', precision: f.precision ?? DECIMAL_DEFAULT.precision, scale: f.scale ?? DECIMAL_DEFAULT.scale };
    case 'boolean': return { ...common, type: 'boolean' };
    case 'date': return { ...common, type: 'date' };
    case 'datetime': return { ...common, type: 'datetime' };
    case 'enum': return { ...common, enum: true, items: f.values };
    case 'json': return { ...common, type: 'json' };
    case 'ref': return {
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
      const table = tableName(manifest.id, entity);
      const scopeKey = entity.scope === 'company' ? ['companyId'] : [];
      const uniques = [
        ...Object.entries(entity.fields).filter(([, f]) => f.unique).map(([name]) => [...scopeKey, name]),
        ...(entity.unique ?? []).map((key) => [...new Set([...scopeKey, ...key])]),
      ].map((props) => ({ properties: props, name: `${table}_${props.map(snake).join('_')}_unique` }));
      const schema = new EntitySchema({ name: entity.name, tableName: table, schema: '*', properties: properties as never, uniques: uniques as never });
      schemas.set(entity.name, schema);
      models.push(describeModel(manifest, entity, schema));
    }
  }
  return models;
}
