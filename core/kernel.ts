// The kernel without HTTP: manifests → entity models → databases → tenant
// registry → migrations. The server, the scripts and the tests all start here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from './config.ts';
import { loadManifests, type LoadedManifest } from './manifest/loader.ts';
import type { Manifest } from './manifest/format.ts';
import { buildEntityModels } from './model/entity-builder.ts';
import type { EntityModel } from './model/entity-model.ts';
import { Databases } from './db/databases.ts';
import { moduleVersions, schemaDigest, type ModuleVersion } from './db/schema-versions.ts';
import { TenantRegistry } from './tenancy/registry.ts';
import { syncRegistry } from './tenancy/registry-sync.ts';
import { BackgroundMigration } from './tenancy/background-migration.ts';
import { SpareSchemas } from './tenancy/spare-schemas.ts';
import { ExternalDatabases } from './db/external-db.ts';
import { PgListener } from './db/pg-listener.ts';
import { Revocations } from './auth/revocations.ts';
import { RoleChanges } from './access/role-changes.ts';
import { SharedRateLimits } from './auth/shared-rate-limits.ts';
import { LoginThrottle } from './auth/login-throttle.ts';
import { PermissionCatalog } from './access/permission-catalog.ts';
import type { PluginModule } from './context/plugin-module.ts';
import { SecretBox } from './secrets.ts';
import { AbilityFactory } from './access/abilities.ts';
import { RoleDirectory } from './access/role-directory.ts';
import { Memberships } from './access/memberships.ts';
import { membershipHooks } from './context/membership-hooks.ts';
import type { Principal } from './access/principal.ts';
import { KernelServices } from './context/services.ts';
import type { EntityHooks } from './context/hooks.ts';
import { builtInTexts, translationKeyHooks } from './context/built-in-texts.ts';
import type { ModuleContext } from './context/module-context.ts';
import { menuOf } from './context/menu-access.ts';
import { crudContextOf } from './context/context-for.ts';
import { Identity } from './auth/identity.ts';
import { UUID } from './ids.ts';
import { ManifestError } from './manifest/errors.ts';
import type { Authenticator } from './context/authenticators.ts';
import { Outbox } from './data/outbox.ts';
import { EventCatalog } from './manifest/events.ts';
import { JobQueues } from './events/job-queues.ts';
import { EventRuntime, type Log } from './events/runtime.ts';
import { checkTargetUrl, postJson } from './outbound-http.ts';
import { DiskFileStore, type FileStore } from './files/file-store.ts';
import { systemClock, type Clock } from './clock.ts';
import { Signals } from './db/signals.ts';
import { DataChanges } from './data/changes.ts';
import { ResultCache } from './crud/result-cache.ts';

export interface LoadedModule extends LoadedManifest {
  plugin?: PluginModule;
}

export interface Kernel {
  config: Config;
  modules: LoadedModule[];
  models: Map<string, EntityModel>;
  versions: ModuleVersion[];
  digest: string;
  dbs: Databases;
  tenants: TenantRegistry;
  /** tenant schemas built ahead: provisioning renames one instead of creating every table */
  spares: SpareSchemas;
  /** the outdated tenants a started server migrates after it listens; requests to them answer 503 TENANT_MIGRATING until then */
  migrations: BackgroundMigration;
  /** access tokens revoked before they expire (every process knows at once) */
  revocations: Revocations;
  /** role writes announce here; role caches of every process listen */
  roleChanges: RoleChanges;
  /** failed logins per account and address */
  loginThrottle: LoginThrottle;
  /** request limits every process counts together (PostgreSQL; embedded PGlite serves one process, which counts alone) */
  rateLimits?: SharedRateLimits;
  permissions: PermissionCatalog;
  /** encrypts and decrypts secret fields */
  secrets: SecretBox;
  /** CASL abilities per tenant and role set */
  abilities: AbilityFactory;
  /** each signed-in user's current roles and companies, per tenant */
  memberships: Memberships;
  /** scoped data access per entity, with every module's write hooks */
  services: KernelServices;
  /** every event type: generated CRUD events and the modules' declared domain events */
  events: EventCatalog;
  /** the transactional outbox every write records its event in */
  outbox: Outbox;
  /** the job runner (pg-boss), one per database */
  queues: JobQueues;
  /** the outbox's dispatcher, the modules' subscribers and jobs */
  eventRuntime: EventRuntime;
  /** starts dispatching events and working jobs in this process (the server does, with config.workers) */
  startWorkers(log: Log): Promise<void>;
  /** every module's write hooks by entity (context/hooks.ts) */
  hooks: Map<string, EntityHooks[]>;
  /** principals other than users, by name, from the modules' plugins */
  authenticators: Map<string, Authenticator>;
  /** uploaded files, one folder per tenant (module code reaches them as ctx.files) */
  files: FileStore;
  /** what "now" is for module code (config.clock, else the system clock) */
  clock: Clock;
  /** wake-ups of waiting module code, across processes (ctx.signal, ctx.waitForSignal) */
  signals: Signals;
  /** a generation per tenant and table, bumped by every committed write: what a cache of table data checks */
  changes: DataChanges;
  /**
   * A context without a request (jobs, subscribers, scripts, demo data): the
   * same scoped data access, ability and transactions a request gets.
   */
  contextFor(opts: { tenant: string; principal: Principal; companyId?: string | null; language?: string }): Promise<ModuleContext>;
  model(name: string): EntityModel;
  close(): Promise<void>;
}

const diskFiles = (config: Config): FileStore => new DiskFileStore(config.files.dir);

async function loadPlugin(config: Config, manifest: Manifest): Promise<PluginModule | undefined> {
  const file = join(config.pluginsDir, manifest.id, 'index.ts');
  return existsSync(file) ? ((await import(pathToFileURL(file).href)) as PluginModule) : undefined;
}

export async function openKernel(config: Config): Promise<Kernel> {
  const loaded = await loadManifests(config.manifestsDir);
  const modules: LoadedModule[] = [];
  for (const l of loaded) modules.push({ ...l, plugin: await loadPlugin(config, l.manifest) });
  const manifests = modules.map((m) => m.manifest);
  const models = new Map(buildEntityModels(manifests).map((m) => [m.name, m]));
  const versions = moduleVersions(manifests);
  const digest = schemaDigest(versions);
  // what the modules declare is checked before anything opens: a bad plugin leaves no connection behind
  const authenticators = authenticatorsOf(modules);
  const hooks = hooksByEntity(modules, models);
  const dbs = new Databases(
    config,
    [...models.values()].map((m) => m.ormEntity),
  );
  const tenants = new TenantRegistry(dbs, config.registrySchema);
  const spares = new SpareSchemas(dbs, { registrySchema: config.registrySchema, target: config.provisionSpares, versions, digest });
  const revocations = new Revocations(dbs, config.registrySchema, config.accessTokenTtlSeconds);
  const roleChanges = new RoleChanges(dbs, config.registrySchema);
  const signals = new Signals(dbs, config.registrySchema);
  const changes = new DataChanges(dbs, config.registrySchema);
  const loginThrottle = new LoginThrottle(dbs, config.registrySchema, config.loginThrottle, config.refreshTokenTtlSeconds * 1000);
  const rateLimits = config.databases.main ? new SharedRateLimits(dbs, config.registrySchema, { syncMs: config.rateLimit.syncMs }) : undefined;
  // one LISTEN connection on a shared server (direct: a transaction pooler keeps no session); embedded PGlite serves one process only
  const listener = config.databases.main ? new PgListener(dbs.sessionUrl('main')!) : undefined;
  const outbox = new Outbox(config.registrySchema);
  const queues = new JobQueues(dbs, { schema: `${config.registrySchema}_jobs`, poolSize: config.jobsPoolSize, maintain: config.workers });
  // databases tenants configure (BI's data sources), read-only, under config.externalDb
  const externalDb = new ExternalDatabases(config.externalDb);
  try {
    await dbs.open();
    await tenants.ensure();
    await revocations.ensure();
    await loginThrottle.ensure();
    await rateLimits?.ensure();
    rateLimits?.start();
    await outbox.ensure(dbs);
    await queues.start();
    if (listener) {
      syncRegistry(tenants, listener);
      revocations.listenOn(listener);
      roleChanges.listenOn(listener);
      signals.listenOn(listener);
      changes.listenOn(listener);
      await listener.start();
    }
  } catch (err) {
    await queues.stop();
    await rateLimits?.stop();
    await listener?.close();
    await dbs.close();
    throw err;
  }
  const kernel = {
    config,
    modules,
    models,
    versions,
    digest,
    dbs,
    tenants,
    spares,
    revocations,
    roleChanges,
    loginThrottle,
    rateLimits,
    permissions: new PermissionCatalog(manifests),
    events: new EventCatalog(manifests),
    outbox,
    queues,
    secrets: new SecretBox(config.secretKey),
    files: diskFiles(config),
    clock: config.clock ?? systemClock,
    signals,
    changes,
    model(name: string) {
      const m = models.get(name);
      if (!m) throw new Error(`no module declares entity "${name}"`);
      return m;
    },
    close: async () => {
      // tenants under way finish their transaction first; none begins after this
      await kernel.migrations.stop();
      await spares.idle();
      unsubscribe();
      await kernel.eventRuntime?.stop();
      await queues.stop();
      await externalDb.close();
      await rateLimits?.stop();
      await listener?.close();
      await dbs.close();
    },
  } as Kernel;
  kernel.migrations = new BackgroundMigration(kernel);
  kernel.authenticators = authenticators;
  kernel.hooks = hooks;
  kernel.abilities = new AbilityFactory(kernel.permissions, new RoleDirectory(kernel, { tenants: config.tenantCacheSize }), { tenants: config.tenantCacheSize });
  kernel.memberships = new Memberships(kernel, { tenants: config.tenantCacheSize });
  const unsubscribe = roleChanges.subscribe((tenantId) => {
    if (tenantId === null) {
      kernel.abilities.invalidateAll();
      kernel.memberships.invalidateAll();
    } else {
      kernel.abilities.invalidate(tenantId);
      kernel.memberships.invalidate(tenantId);
    }
  });
  kernel.services = new KernelServices({
    models,
    secrets: kernel.secrets,
    hooks: kernel.hooks,
    codesOf: (tenantId, roles) => kernel.abilities.codes(tenantId, roles),
    principalOf: async (crud, userId) => {
      const tenant = UUID.test(userId) ? await tenants.find(crud.tenantId) : undefined;
      // inside a transaction on its connection (embedded PGlite has one, which the transaction holds)
      return tenant ? kernel.memberships.principal(tenant, userId.toLowerCase(), crud.tx ? crud.em : undefined) : null;
    },
    abilityOf: (crud, roles) => kernel.abilities.for(crud.tenantId, roles, crud.tx ? crud.em : undefined),
    isKnownCode: (code) => kernel.permissions.has(code),
    revokeRefreshTokens: (ctx, userId) => new Identity(kernel).revokeAllOf(ctx.em, userId),
    revokeAccessTokens: (tenantId, userId) => revocations.revokeUser(tenantId, userId),
    rolesChanged: (tenantId) => roleChanges.announce(tenantId),
    outbox: config.events.enabled ? outbox : undefined,
    events: kernel.events,
    enqueue: (crud, job, data, opts) => kernel.eventRuntime.enqueue(crud, job, data, opts),
    enqueueMany: (crud, job, items) => kernel.eventRuntime.enqueueMany(crud, job, items),
    outbound: {
      postJson: (url, body, headers, opts = {}) => postJson(url, body, headers, { ...config.outbound, timeoutMs: Math.max(1, Math.min(config.outbound.timeoutMs, opts.timeoutMs ?? Infinity)) }),
      checkUrl: (url) => checkTargetUrl(url, config.outbound.allowPrivate),
    },
    files: kernel.files,
    clock: kernel.clock,
    signals,
    data: { changes, results: new ResultCache(config.resultCache) },
    menu: menuOf(modules.map((m) => m.manifest)),
    externalDb,
  });
  kernel.contextFor = async ({ tenant: id, principal, companyId = null, language }) => {
    const tenant = await tenants.find(id);
    if (!tenant) throw new Error(`no tenant "${id}"`);
    const ability = principal.kind === 'system' ? kernel.services.systemAbility : await kernel.abilities.of(tenant.id, principal);
    const lang = language ?? tenant.defaultLanguage ?? config.defaultLanguage;
    const em = dbs.get(tenant.connectionKey).em.fork({ schema: tenant.schema });
    return kernel.services.contextOf(crudContextOf({ tenant, principal, ability, companyId, em, read: { prefs: [lang], translations: false }, writeLanguage: lang }));
  };
  try {
    kernel.eventRuntime = new EventRuntime({
      dbs,
      outbox,
      changes,
      queues,
      tenants,
      registryTable: tenants.table,
      modules,
      knownTypes: kernel.events.types.map((t) => t.type),
      contextFor: (opts) => kernel.contextFor(opts),
      options: config.events,
    });
    await kernel.eventRuntime.prepare();
  } catch (err) {
    await kernel.close();
    throw err;
  }
  kernel.startWorkers = (log) => kernel.eventRuntime.start(log);
  return kernel;
}

/** Every module's authenticators by name; two of one name stop the start. */
function authenticatorsOf(modules: LoadedModule[]): Map<string, Authenticator> {
  const out = new Map<string, Authenticator>();
  for (const m of modules) {
    for (const [name, a] of Object.entries(m.plugin?.authenticators ?? {})) {
      if (out.has(name)) throw new ManifestError(m.file, '/', `plugins/${m.manifest.id}/index.ts exports authenticator "${name}", which another module exports too`);
      out.set(name, a);
    }
  }
  return out;
}

/** The kernel's and every module's write hooks by entity; a hook on an entity no module declares stops the start. */
function hooksByEntity(modules: LoadedModule[], models: Map<string, EntityModel>): Map<string, EntityHooks[]> {
  // the kernel's own first: a module's refusal later in the same transaction rolls them back with it
  const out = new Map<string, EntityHooks[]>([...membershipHooks((e) => models.has(e))].map(([e, h]) => [e, [h]]));
  // a tenant's text names a text the interface has (built-in-texts.ts), whoever writes it
  if (models.has('Translation')) out.set('Translation', [translationKeyHooks(builtInTexts(modules))]);
  for (const m of modules) {
    for (const [entity, hooks] of Object.entries(m.plugin?.hooks ?? {})) {
      if (!models.has(entity)) throw new ManifestError(m.file, '/', `plugins/${m.manifest.id}/index.ts hooks entity "${entity}", which no module declares`);
      out.set(entity, [...(out.get(entity) ?? []), ...[hooks].flat()]);
    }
  }
  return out;
}
