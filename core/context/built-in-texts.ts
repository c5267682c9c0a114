// The built-in interface texts: every label a manifest gives (menu entries,
// entities, fields), every page title and texts file of a module, and every
// string of the console, as keys in a namespace (the module's id; "console"
// for the console's own) with their English text. Read from the manifests and
// files alone, once at start: the kernel refuses Translation rows for keys that
// are not here, and http/interface-texts.ts merges a tenant's texts over them.
import { readFileSync } from 'node:fs';
import type { Manifest } from '../manifest/format.ts';
import type { EntityHooks } from './hooks.ts';
import type { PluginModule } from './plugin-module.ts';
import { validationError } from './module-context.ts';

const CONSOLE_NAMESPACE = 'console';
// read here, not imported: the console is a layer above (console/texts.ts merges the same files)
const consoleFile = (name: string): Record<string, string> => JSON.parse(readFileSync(new URL(`../console/${name}`, import.meta.url), 'utf8'));
const CONSOLE_TEXTS: Record<string, string> = { ...consoleFile('texts.en.json'), ...consoleFile('problem-texts.en.json') };

export type Texts = Map<string, Map<string, string>>;

/** What a loaded module gives the texts: its manifest's labels, its pages' titles and its texts file. */
export interface TextSource {
  manifest: Pick<Manifest, 'id' | 'menu' | 'entities' | 'routes'>;
  plugin?: Pick<PluginModule, 'pages' | 'texts'>;
}

/** namespace → key → built-in English text, from the manifests, the modules' texts files and the console. */
export function builtInTexts(modules: readonly TextSource[]): Texts {
  const texts: Texts = new Map([[CONSOLE_NAMESPACE, new Map(Object.entries(CONSOLE_TEXTS))]]);
  for (const { manifest: m, plugin } of modules) {
    const own = new Map<string, string>();
    for (const e of m.menu ?? []) own.set(menuKey(e.path), e.label);
    for (const e of m.entities ?? []) {
      if (e.label) own.set(entityKey(e.name), e.label);
      for (const [name, f] of Object.entries(e.fields)) {
        if (f.label && !f.internal) own.set(fieldKey(e.name, name), f.label);
        if (f.group && !f.internal) own.set(groupKey(e.name, f.group), f.group);
        if (!f.internal) for (const value of f.values ?? []) own.set(valueKey(e.name, name, value), f.valueLabels?.[value] ?? value);
      }
      for (const r of e.related ?? []) if (r.label) own.set(relatedKey(e.name, r.entity, r.field), r.label);
    }
    for (const r of m.routes ?? []) if (!('entity' in r) && r.label) own.set(actionKey(r.handler), r.label);
    for (const [path, page] of Object.entries(plugin?.pages ?? {})) if (page.title) own.set(pageKey(path), page.title);
    if (plugin?.texts) for (const [key, text] of moduleTexts(m.id, plugin.texts)) own.set(key, text);
    texts.set(m.id, own);
  }
  return texts;
}

const MANIFEST_KEY = /^(menu|entity|field|page|group|related|action|enum)\./;

/** A module's texts file: a JSON object of key → English text, its keys none of the manifest's. */
function moduleTexts(module: string, file: URL): [string, string][] {
  const where = `plugins/${module}'s texts (${file.pathname.split('/').slice(-2).join('/')})`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${where}: must be a JSON object of key → text`);
  const entries = Object.entries(parsed as Record<string, unknown>);
  for (const [key, text] of entries) {
    if (typeof text !== 'string' || !text) throw new Error(`${where}: "${key}" must be a non-empty string`);
    if (MANIFEST_KEY.test(key)) throw new Error(`${where}: "${key}" starts like the keys the manifest's labels get (menu., entity., field., page., group., related., action., enum.)`);
  }
  return entries as [string, string][];
}

export const menuKey = (path: string) => `menu${path.replaceAll('/', '.')}`;
/** a module page's title (ConsolePage.title): /pm/projects/:id/board → page.pm.projects.:id.board */
export const pageKey = (path: string) => `page${path.replaceAll('/', '.')}`;
export const entityKey = (entity: string) => `entity.${entity}`;
export const fieldKey = (entity: string, field: string) => `field.${entity}.${field}`;
/** a field group's heading on an entity's record page and form */
export const groupKey = (entity: string, group: string) => `group.${entity}.${slug(group)}`;
/** A label as a key's segment: "Contact details" → contact-details (a Translation key takes no spaces). */
const slug = (label: string) =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '') || 'group';
/** a related list's heading on an entity's record page (the manifest's "related" label) */
export const relatedKey = (entity: string, other: string, field?: string) => `related.${entity}.${other}${field ? `.${field}` : ''}`;
/** how an enum field's value reads */
export const valueKey = (entity: string, field: string, value: string) => `enum.${entity}.${field}.${value}`;
/** a custom route's button (its "label") */
export const actionKey = (handler: string) => `action.${handler}`;

/**
 * The kernel's rule on every Translation write: a row names a namespace and one
 * of its keys, else it would be stored and never shown (a typo, a key renamed
 * since). Checked on create and on any change of namespace or key.
 */
export function translationKeyHooks(texts: Texts): EntityHooks {
  return {
    async beforeWrite(_ctx, { op, input, before }) {
      if (op === 'delete' || !input || (op !== 'create' && !('namespace' in input) && !('key' in input))) return;
      const namespace = input.namespace !== undefined ? input.namespace : before?.namespace;
      const key = input.key !== undefined ? input.key : before?.key;
      // a missing or mistyped value is the validation's to answer
      if (typeof namespace !== 'string' || typeof key !== 'string') return;
      const keys = texts.get(namespace);
      if (!keys) throw validationError([{ path: '/namespace', message: `"${namespace}" is no namespace of the interface texts (a module's id, or "console")` }]);
      if (!keys.has(key)) throw validationError([{ path: '/key', message: `"${key}" is no text key of namespace "${namespace}"` }]);
    },
  };
}
