// The kernel's data services: one CrudService per entity, each with the write
// hooks every module declares for it (a module may hook another module's
// entities), adapted so hooks receive a ModuleContext.
import { createMongoAbility } from '@casl/ability';
import type { EntityModel } from '../model/entity-model.ts';
import type { SecretBox } from '../secrets.ts';
import type { Ability } from '../access/abilities.ts';
import type { Principal } from '../access/principal.ts';
import { CrudService, type CrudContext, type DataRuntime, type WriteHooks, type WriteEvent } from '../crud/crud-service.ts';
import { ModuleContext, type ContextServices, type EmittedEvent, type EnqueueItem, type EnqueueOptions, type Outbound } from './module-context.ts';
import type { MenuEntry } from './menu-access.ts';
import type { PlinthEvent } from '../data/outbox.ts';
import type { EntityHooks } from './hooks.ts';
import type { Outbox } from '../data/outbox.ts';
import type { EventCatalog } from '../manifest/events.ts';
import type { FileStore } from '../files/file-store.ts';
import type { Clock } from '../clock.ts';
import type { Signals } from '../db/signals.ts';
import type { ExternalDatabases } from '../db/external-db.ts';

export interface ServiceDeps {
  models: Map<string, EntityModel>;
  secrets: SecretBox;
  /** hooks by entity name, in module load order */
  hooks: Map<string, EntityHooks[]>;
  codesOf(tenantId: string, roles: string[]): Promise<string[]>;
  /** an active user's principal (current roles and companies) on the context's connection; null when none */
  principalOf(crud: CrudContext, userId: string): Promise<Principal | null>;
  /** the ability of a role set in the context's tenant, on the context's connection */
  abilityOf(crud: CrudContext, roles: string[]): Promise<Ability>;
  isKnownCode(code: string): boolean;
  revokeRefreshTokens(ctx: CrudContext, userId: string): Promise<void>;
  revokeAccessTokens(tenantId: string, userId: string): Promise<void>;
  rolesChanged(tenantId: string): Promise<void>;
  /** where writes record their events (none: no events, e.g. a script's kernel without the tables) */
  outbox?: Outbox;
  events: EventCatalog;
  enqueue(crud: CrudContext, job: string, data: unknown, opts: EnqueueOptions): Promise<string | null>;
  enqueueMany(crud: CrudContext, job: string, items: EnqueueItem[]): Promise<void>;
  outbound: Outbound;
  files: FileStore;
  clock: Clock;
  signals: Signals;
  menu: MenuEntry[];
  /** committed changes and the results cached until they happen */
  data?: DataRuntime;
  /** external PostgreSQL databases under config.externalDb, closed with the kernel */
  externalDb: ExternalDatabases;
}

export class KernelServices implements ContextServices {
  readonly systemAbility: Ability = createMongoAbility([{ action: 'manage', subject: 'all' }]);
  #deps: ServiceDeps;
  #services = new Map<string, CrudService>();

  /** every event type of the loaded modules (fixed once the manifests are loaded) */
  readonly eventTypes: string[];
  readonly externalDb: ExternalDatabases;

  constructor(deps: ServiceDeps) {
    this.#deps = deps;
    this.eventTypes = deps.events.types.map((t) => t.type);
    this.externalDb = deps.externalDb;
  }

  get models(): ReadonlyMap<string, EntityModel> {
    return this.#deps.models;
  }

  service(entity: string): CrudService {
    let service = this.#services.get(entity);
    if (!service) {
      const model = this.#deps.models.get(entity);
      if (!model) throw new Error(`no module declares entity "${entity}"`);
      service = new CrudService(model, this.#deps.models, this.#deps.secrets, this.#writeHooks(this.#deps.hooks.get(entity) ?? []), this.#eventsOf(entity), this.#deps.data);
      this.#services.set(entity, service);
    }
    return service;
  }

  #eventsOf(entity: string) {
    const { outbox, events } = this.#deps;
    return outbox && { outbox, stateEvent: (state: string) => events.stateEvent(entity, state), serviceOf: (other: string) => this.service(other) };
  }

  /** The module context of a data-layer context. */
  contextOf(crud: CrudContext): ModuleContext {
    return new ModuleContext(this, crud);
  }

  codesOf(tenantId: string, roles: string[]): Promise<string[]> {
    return this.#deps.codesOf(tenantId, roles);
  }
  isKnownCode(code: string): boolean {
    return this.#deps.isKnownCode(code);
  }
  async actingAs(crud: CrudContext, userId: string): Promise<{ principal: Principal; ability: Ability } | null> {
    const principal = await this.#deps.principalOf(crud, userId);
    return principal && { principal, ability: await this.#deps.abilityOf(crud, principal.roles) };
  }
  revokeRefreshTokens(ctx: CrudContext, userId: string): Promise<void> {
    return this.#deps.revokeRefreshTokens(ctx, userId);
  }
  revokeAccessTokens(tenantId: string, userId: string): Promise<void> {
    return this.#deps.revokeAccessTokens(tenantId, userId);
  }
  rolesChanged(tenantId: string): Promise<void> {
    return this.#deps.rolesChanged(tenantId);
  }
  get outbound(): Outbound {
    return this.#deps.outbound;
  }
  get files(): FileStore {
    return this.#deps.files;
  }
  get clock(): Clock {
    return this.#deps.clock;
  }
  signal(tenantId: string, topic: string): Promise<void> {
    return this.#deps.signals.signal(tenantId, topic);
  }
  waitForSignal(tenantId: string, topic: string, ms: number, abort?: AbortSignal): Promise<boolean> {
    return this.#deps.signals.wait(tenantId, topic, ms, abort);
  }
  get menu(): MenuEntry[] {
    return this.#deps.menu;
  }
  enqueue(crud: CrudContext, job: string, data: unknown, opts: EnqueueOptions): Promise<string | null> {
    return this.#deps.enqueue(crud, job, data, opts);
  }
  enqueueMany(crud: CrudContext, job: string, items: EnqueueItem[]): Promise<void> {
    return this.#deps.enqueueMany(crud, job, items);
  }
  async readEvent(crud: CrudContext, id: string): Promise<PlinthEvent | null> {
    return (await this.#deps.outbox?.read(crud, id)) ?? null;
  }
  async emit(crud: CrudContext, type: string, event: EmittedEvent): Promise<void> {
    const { event: declared, error } = this.#deps.events.check(type, event.payload);
    if (error) throw new Error(`event ${type}: ${error}`);
    if (declared.entity && event.entity !== undefined && event.entity !== declared.entity) throw new Error(`event ${type} is about ${declared.entity}, not ${event.entity}`);
    await this.#deps.outbox?.record(crud, [{ type, entity: declared.entity, entityId: event.entityId ?? null, payload: event.payload, payloadVersion: declared.version }]);
  }

  /** Module hooks (ModuleContext) as the data layer runs them (CrudContext), in declaration order. */
  #writeHooks(list: EntityHooks[]): WriteHooks | undefined {
    if (!list.length) return undefined;
    const before = list.filter((h) => h.beforeWrite);
    const after = list.filter((h) => h.afterWrite);
    const committed = list.filter((h) => h.afterCommit);
    return {
      beforeWrite: before.length
        ? async (crud, event) => {
            let input = event.input;
            for (const h of before) input = (await h.beforeWrite!(this.contextOf(crud), { ...event, input })) ?? input;
            return input;
          }
        : undefined,
      afterWrite: after.length
        ? async (crud, event) => {
            for (const h of after) await h.afterWrite!(this.contextOf(crud), event);
          }
        : undefined,
      afterCommit: committed.length
        ? async (crud, event: WriteEvent) => {
            for (const h of committed) await h.afterCommit!(this.contextOf(crud), event);
          }
        : undefined,
    };
  }
}
