// What a person starting Plinth on a terminal needs to see once it is ready:
// where it answers, who can log in, where the data lives. On a terminal this
// is text; without one (a service, a container) the same facts go out as one
// JSON log line, so log collectors get nothing they cannot parse.
import { join } from 'node:path';
import type { Config } from '../core/config.ts';

export interface Login {
  tenant: string;
  email: string;
  /** absent when the account's password is the operator's own (PLATFORM_ADMIN_PASSWORD) */
  password?: string;
  what: string;
}

export interface ReadyFacts {
  url: string;
  database: string;
  modules: string[];
  logins: Login[];
  /** outdated tenants being migrated in the background (they answer 503 TENANT_MIGRATING until then) */
  migrating: number;
  /** sample rows per module, when this start created the demo tenant */
  demoRows?: Record<string, number>;
  readyMs: number;
}

/** Where the data lives, without any password a database URL holds. */
export function describeDatabase(config: Pick<Config, 'databases' | 'dataDir' | 'pgliteInMemory'>): string {
  const url = config.databases.main;
  if (!url) return config.pgliteInMemory ? 'embedded PGlite in memory (gone when the process stops)' : `embedded PGlite in ${join(config.dataDir, 'pglite')}`;
  try {
    const u = new URL(url);
    u.password = '';
    return `PostgreSQL ${u.toString()}`;
  } catch {
    return 'PostgreSQL (DATABASE_URL)';
  }
}

export function banner(f: ReadyFacts): string {
  const lines = [
    '',
    `  Plinth is ready (${f.readyMs} ms)`,
    '',
    `  Console      ${f.url}/   (log in with a demo account below)`,
    `  API          ${f.url}/api`,
    `  API docs     ${f.url}/api-docs`,
    `  Data         ${f.database}`,
    `  Modules      ${f.modules.join(', ')}`,
    ...(f.demoRows
      ? [
          `  Demo data    created now: ${
            Object.entries(f.demoRows)
              .map(([module, n]) => `${n} ${module} rows`)
              .join(', ') || 'a tenant, no sample rows'
          }`,
        ]
      : []),
    ...(f.migrating ? [`  Migrating    ${f.migrating} tenant${f.migrating === 1 ? '' : 's'} in the background (progress in the log)`] : []),
  ];
  if (f.logins.length) {
    lines.push('', '  Log in (POST /api/auth/login):');
    for (const l of f.logins) lines.push(`    ${l.what.padEnd(22)} tenant "${l.tenant}"  ${l.email}  ${l.password ? `password "${l.password}"` : '(password from PLATFORM_ADMIN_PASSWORD)'}`);
  }
  lines.push('', '  Stop with Ctrl+C.', '');
  return `${lines.join('\n')}\n`;
}
