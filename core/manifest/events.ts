// Event types, derived from the manifests: every entity's generated
// <module>.<entity>.<created|updated|deleted>, and the domain events a module
// declares with their payload schema. The loader checks declarations here; the
// module context validates what module code emits; the OpenAPI document lists
// them all in its `webhooks` section.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Manifest, ManifestEvent } from './format.ts';
import { ManifestError } from './errors.ts';
import { entityNoun } from './names.ts';

export const CRUD_ACTIONS = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/** "QuoteLine" → "quote-line": the entity segment of an event type */
const eventEntity = (entity: string) => entity.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

/** catalog + Product + created → "catalog.product.created" */
export const crudEventType = (module: string, entity: string, action: (typeof CRUD_ACTIONS)[keyof typeof CRUD_ACTIONS]) => `${module}.${eventEntity(entityNoun(module, entity))}.${action}`;

/** lead + "in_progress" → "crm.lead.in-progress": the event of a move into a state */
const stateEventType = (module: string, entity: string, state: string) =>
  `${module}.${eventEntity(entityNoun(module, entity))}.${state
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')}`;

export interface EventType {
  type: string;
  module: string;
  entity: string | null;
  /** crud: a generated write; state: a move of an entity's state field into one state; domain: declared, emitted by module code */
  kind: 'crud' | 'state' | 'domain';
  description: string;
  version: number;
  /** the declared payload schema; generated CRUD events carry { row, changes } of their entity */
  payload?: unknown;
}

// ajv-formats is CommonJS: its default export is the function
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/** Declared events: names unique, entities of this module, no clash with a generated name, a payload schema that compiles. */
export function checkEvents(m: Manifest, file: string): void {
  const entities = new Set((m.entities ?? []).map((e) => e.name));
  const generated = new Set([...entities].flatMap((e) => Object.values(CRUD_ACTIONS).map((a) => `${eventEntity(entityNoun(m.id, e))}.${a}`)));
  // a declared event named like a state move (lead.converted) replaces the derived one: module code emits it
  (m.events ?? []).forEach((e, i) => {
    const at = `/events/${i}`;
    if ((m.events ?? []).findIndex((x) => x.name === e.name) !== i) throw new ManifestError(file, `${at}/name`, `duplicate event "${e.name}"`);
    if (generated.has(e.name)) throw new ManifestError(file, `${at}/name`, `"${e.name}" is generated for every entity's writes: name the domain action instead`);
    if (e.entity && !entities.has(e.entity)) throw new ManifestError(file, `${at}/entity`, `"${e.entity}" is no entity of this module`);
    if (typeof e.payload !== 'object' || e.payload === null) throw new ManifestError(file, `${at}/payload`, 'needs a JSON Schema object');
    try {
      ajv.compile(e.payload as object);
    } catch (err) {
      throw new ManifestError(file, `${at}/payload`, `is no valid JSON Schema: ${(err as Error).message}`);
    }
  });
}

export class EventCatalog {
  readonly types: EventType[];
  #declared = new Map<string, { event: EventType; validate: ValidateFunction }>();
  #states = new Map<string, string>();

  constructor(manifests: Manifest[]) {
    this.types = [];
    for (const m of manifests) {
      const declared = new Set((m.events ?? []).map((e) => `${m.id}.${e.name}`));
      for (const e of m.entities ?? []) {
        if (e.events === false) continue;
        const label = e.label ?? e.name;
        for (const [op, action] of Object.entries(CRUD_ACTIONS)) {
          this.types.push({ type: crudEventType(m.id, e.name, action), module: m.id, entity: e.name, kind: 'crud', description: `A ${label} was ${action} (generated ${op}).`, version: 1 });
        }
        // a move into a state is news of its own (crm.quote.accepted), unless module code emits that event itself
        const tr = e.transitions;
        for (const state of tr ? (e.fields[tr.field]?.values ?? []) : []) {
          const type = stateEventType(m.id, e.name, state);
          if (declared.has(type) || this.types.some((t) => t.type === type)) continue;
          this.types.push({ type, module: m.id, entity: e.name, kind: 'state', description: `A ${label} moved to ${tr!.field} "${state}" (sent besides its updated event).`, version: 1 });
          this.#states.set(`${e.name}\u0000${state}`, type);
        }
      }
      for (const e of m.events ?? []) this.#declare(m.id, e);
    }
  }

  /** The event a move of `entity`'s state field into `state` emits, if one is derived for it. */
  stateEvent(entity: string, state: string): string | undefined {
    return this.#states.get(`${entity}\u0000${state}`);
  }

  #declare(module: string, e: ManifestEvent): void {
    const event: EventType = { type: `${module}.${e.name}`, module, entity: e.entity ?? null, kind: 'domain', description: e.description, version: e.version ?? 1, payload: e.payload };
    this.types.push(event);
    this.#declared.set(event.type, { event, validate: ajv.compile(e.payload as object) });
  }

  /** The declared domain event `type`, or an error naming why `payload` does not fit it. */
  check(type: string, payload: unknown): { event: EventType; error?: string } {
    const hit = this.#declared.get(type);
    if (!hit) throw new Error(`no module declares the event "${type}" (manifest "events")`);
    if (hit.validate(payload)) return { event: hit.event };
    return { event: hit.event, error: ajv.errorsText(hit.validate.errors, { dataVar: 'payload' }) };
  }
}

/**
 * Whether an event type matches a subscription pattern: exact, `*` for
 * every event, or a prefix wildcard by segment (`crm.*`, `crm.lead.*`).
 */
export function matchesPattern(pattern: string, type: string): boolean {
  if (pattern === '*' || pattern === type) return true;
  return pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1));
}

export const EVENT_PATTERN = '^(\\*|[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*){0,2}(\\.\\*)?)$';
