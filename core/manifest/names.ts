// How manifest names become SQL and API names: columns, tables, schema ids and
// operationId prefixes. The loader checks names with these; the model uses them.
import type { ManifestEntity } from './format.ts';

export const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
/** "crm-extra" → "CrmExtra" (schema ids, operation nouns) */
export const pascal = (s: string) =>
  s
    .split(/[-_]/)
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');
/** "crm-extra" → "crmExtra" (operationId prefixes) */
export const camel = (s: string) => s.replace(/-./g, (m) => m[1].toUpperCase());

export function plural(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

/**
 * The entity's name without its module's name in front: AiClient of module ai
 * is "Client" in tables (ai_clients), schema ids (AiClient), operationIds
 * (aiListClients) and event types (ai.client.created), which all carry the
 * module already. Other names stay as they are.
 */
export function entityNoun(module: string, name: string): string {
  return hasModulePrefix(module, name) ? name.slice(pascal(module).length) : name;
}

/** Whether a PascalCase name starts with the module's name as a word of its own: AiClient of ai, not Aim or Ai. */
export function hasModulePrefix(module: string, name: string): boolean {
  const prefix = pascal(module);
  return name.length > prefix.length && name.startsWith(prefix) && /[A-Z]/.test(name[prefix.length]);
}

/** The OpenAPI components an entity's generated routes may add, <Module><Noun><suffix> (http/json-schemas.ts, bulk-schemas.ts). */
export const ENTITY_COMPONENT_SUFFIXES = ['', 'Create', 'Replace', 'Patch', 'ListItem', 'List', 'Bulk', 'BulkResult'];

export function tableName(module: string, entity: ManifestEntity): string {
  return entity.table ?? `${snake(module).replace(/-/g, '_')}_${plural(snake(entityNoun(module, entity.name)))}`;
}
