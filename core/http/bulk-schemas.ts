// JSON Schemas of the bulk route (POST <collection>/bulk): the request and the
// answer when every row succeeded (the failed rows are in Problem's `failures`).
import { Type, type TSchema } from 'typebox';
import type { EntityModel } from '../model/entity-model.ts';
import { bodySchema, schemaId } from './json-schemas.ts';

type Ops = Set<string>;

const Id = Type.String({ format: 'uuid', description: 'id of the row' });
const Version = Type.Integer({ minimum: 1, maximum: 2147483647, description: 'the version this write is based on (as If-Match): a row at another version fails with 412' });

/** The request and result schemas of an entity's bulk route, for the operations its CRUD route has. */
export function bulkSchemas(model: EntityModel, ops: Ops, maxRows: number): TSchema[] {
  const props: Record<string, TSchema> = {};
  const list = (items: TSchema, what: string) => Type.Optional(Type.Array(items, { maxItems: maxRows, description: what }));
  if (ops.has('create')) props.create = list(Type.Ref(schemaId(model, 'Create')), 'rows to create, each as POST takes it');
  if (ops.has('update')) {
    const patch = (bodySchema(model, 'Patch') as TSchema & { properties: Record<string, TSchema> }).properties;
    props.update = list(
      Type.Object({ id: Id, version: Type.Optional(Version), ...patch }, { additionalProperties: false, description: 'the id, optionally the version, and the fields to change (as PATCH)' }),
      'rows to change, each as PATCH takes it',
    );
  }
  if (ops.has('delete')) props.delete = list(Type.Object({ id: Id, version: Type.Optional(Version) }, { additionalProperties: false }), 'rows to delete');
  const body = Type.Object(props, {
    $id: schemaId(model, 'Bulk'),
    title: `Bulk writes of ${model.label}`,
    description: `creates, then updates, then deletes, in one transaction; at most ${maxRows} rows in all`,
    additionalProperties: false,
    minProperties: 1,
  });
  const result = Type.Object(
    {
      created: Type.Array(Type.Ref(schemaId(model)), { description: 'the created rows, in request order' }),
      updated: Type.Array(Type.Ref(schemaId(model)), { description: 'the changed rows, in request order' }),
      deleted: Type.Array(Type.Object({ id: Id }, { additionalProperties: false }), { description: 'the deleted ids, in request order' }),
    },
    { $id: schemaId(model, 'BulkResult'), title: `Bulk writes of ${model.label} done`, additionalProperties: false },
  );
  return [body, result];
}
