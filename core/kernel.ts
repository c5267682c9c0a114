// The kernel without HTTP: manifests → entity models → databases → tenant
// registry → migrations. The server, the scripts and the tests all start here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from './config.ts';
import { loadManifests, type LoadedManifest } from './manifest/loader.ts';
import type { Manifest } from './manifest/schema.ts';
import { buildEntityModels } from './model/entity-builder.ts';
import type { EntityModel } from './model/entity-model.ts';
import { Databases } from './db/databases.ts';
import { moduleVersions, schemaDigest, type ModuleVersion } from './db/schema-versions.ts';
import { TenantRegistry } from './tenancy/registry.ts';
import { syncRegistry } from './tenancy/registry-sync.ts';
import { PgListener } from './db/pg-listener.ts';
import { Revocations } from './auth/revocations.ts';
import { RoleChanges } from './access/role-changes.ts';
import { LoginThrottle } from './auth/login-throttle.ts';
import { PermissionCatalog } from './access/permission-catalog.ts';
import type { PluginModule } from './plugin-api.ts';
import { SecretBox } from './secrets.ts';

export interface LoadedModule extends LoadedManifest { plugin?: PluginModule }

export interface Kernel {
  config: Config;
  modules: LoadedModule[];
  models: Map<string, EntityModel>;
  versions: ModuleVersion[];
  digest: string;
  dbs: Databases;
  tenants: TenantRegistry;
  /** access tokens revoked before they expire (every process knows at once) */
  revocations: Revocations;
  /** role writes announce here; role caches of every process listen */
  roleChanges: RoleChanges;
  /** failed logins per account and address */
  loginThrottle: LoginThrottle;
  permissions: PermissionCatalog;
  /** encrypts and decrypts secret fields */
  secrets: SecretBox;
  model(name: string): EntityModel;
  close(): Promise<void>;
}

async function loadPlugin(config: Config, manifest: Manifest): Promise<PluginModule | undefined> {
  const file = join(config.pluginsDir, manifest.id, 'index.ts');
  return existsSync(file) ? await import(pathToFileURL(file).href) as PluginModule : undefined;
}

export async function openKernel(config: Config): Promise<Kernel> {
  const loaded = await loadManifests(config.manifestsDir);
  const modules: LoadedModule[] = [];
  for (const l of loaded) modules.push({ ...l, plugin: await loadPlugin(config, l.manifest) });
  const manifests = modules.map((m) => m.manifest);
  const models = new Map(buildEntityModels(manifests).map((m) => [m.name, m]));
  const versions = moduleVersions(manifests);
  const dbs = new Databases(config, [...models.values()].map((m) => m.schema));
  const tenants = new TenantRegistry(dbs, config.registrySchema);
  const revocations = new Revocations(dbs, config.registrySchema, config.accessTokenTtlSeconds);
  const roleChanges = new RoleChanges(dbs, config.registrySchema);
  const loginThrottle = new LoginThrottle(dbs, config.registrySchema, config.loginThrottle, config.refreshTokenTtlSeconds * 1000);
  // one LISTEN connection on a shared server; embedded PGlite serves one process only
  const listener = config.databases.main ? new PgListener(config.databases.main) : undefined;
  try {
    await dbs.open();
    await tenants.ensure();
    await revocations.ensure();
    await loginThrottle.ensure();
    if (listener) {
      syncRegistry(tenants, listener);
      revocations.listenOn(listener);
      roleChanges.listenOn(listener);
      await listener.start();
    }
  } catch (err) {
    await listener?.close();
    await dbs.close();
    throw err;
  }
  return {
    config, modules, models, versions,
    digest: schemaDigest(versions),
    dbs, tenants, revocations, roleChanges, loginThrottle,
    permissions: new PermissionCatalog(manifests),
    secrets: new SecretBox(config.secretKey),
    model(name) {
      const m = models.get(name);
      if (!m) throw new Error(`no module declares entity "${name}"`);
      return m;
    },
    close: async () => { await listener?.close(); await dbs.close(); },
  };
}
