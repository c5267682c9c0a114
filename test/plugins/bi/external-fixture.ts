// An external database for the data source tests (not a test file): a database
// of its own on the local PostgreSQL server (127.0.0.1:5432, trust
// authentication, user postgres) with a schema `sales` of known rows, dropped
// at teardown. On embedded PGlite the tests still use that server when it is
// reachable; without one they are skipped. Also: kernels that may connect to
// it (the EXTERNAL_DB_ALLOW_PRIVATE setting), and the BI helpers for sources.
import { randomBytes } from 'node:crypto';
import pg from '../../../core/db/pg.ts';
import { externalDbConfig } from '../../../core/config.ts';
import { build, testConfig, type TestContext } from '../../helper.ts';
import { expectStatus, type BiUser } from './bi-api.ts';

export const SERVER = '127.0.0.1:5432';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The orders of the fixture, as a test computes its expectations from them. */
export const ORDERS = [
  { customer: 'Acme', region: 'north', amount: '100.00', quantity: 2, orderedOn: '2026-01-15', shippedAt: '2026-01-16T10:00:00Z', paid: true },
  { customer: 'Acme', region: 'south', amount: '250.50', quantity: 1, orderedOn: '2026-02-20', shippedAt: '2026-02-21T23:30:00Z', paid: true },
  { customer: 'Globex', region: 'north', amount: '30.25', quantity: 5, orderedOn: '2026-02-03', shippedAt: null, paid: false },
  { customer: 'Globex', region: null, amount: null, quantity: 3, orderedOn: '2026-04-10', shippedAt: '2026-04-11T00:30:00Z', paid: false },
  { customer: 'Initech', region: 'east', amount: '1200.00', quantity: 10, orderedOn: '2026-04-30', shippedAt: '2026-05-01T08:00:00Z', paid: true },
  // a value that reads like SQL: it is data, never code
  { customer: "O'Brien'); drop table sales.orders; --", region: 'south', amount: '10.00', quantity: 1, orderedOn: '2026-05-05', shippedAt: null, paid: false },
];

const SETUP = `
create schema sales;
create type sales.region as enum ('north', 'south', 'east');
create table sales.orders (
  id serial primary key,
  customer text not null,
  region sales.region,
  amount numeric(12, 2),
  quantity int4 not null,
  ordered_on date not null,
  shipped_at timestamptz,
  paid boolean not null default false,
  notes jsonb,
  "Odd Name" text
);
comment on table sales.orders is 'Orders of the shop';
create view sales.big_orders as select id, customer, amount from sales.orders where amount >= 100;
-- every row waits a while: a query over it outlasts a short statement timeout
create view sales.slow as select n, pg_sleep(0.2) is null as slept from generate_series(1, 50) n;
create table sales.numbers as select n from generate_series(1, 50) n;
-- a function that writes: calling it in a read-only transaction must fail
create function sales.touch() returns int language sql as $$ update sales.orders set quantity = quantity + 1 returning 1 $$;
create table public.elsewhere (x int);
`;

export interface ExternalFixture {
  /** postgres://postgres@127.0.0.1:5432/<database> */
  url: string;
  database: string;
  /** runs SQL on the external database as its owner */
  sql(text: string, values?: unknown[]): Promise<Record<string, any>[]>;
}

async function client(database: string) {
  const c = new pg.Client({ connectionString: `postgres://postgres@${SERVER}/${database}`, connectionTimeoutMillis: 2000 });
  await c.connect();
  return c;
}

/** A fresh external database with the fixture's rows; undefined when no server is reachable. */
export async function externalDatabase(t: Teardown): Promise<ExternalFixture | undefined> {
  let admin;
  try {
    admin = await client('postgres');
  } catch {
    return undefined;
  }
  const database = `plinth_ext_${randomBytes(5).toString('hex')}`;
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  t.teardown(async () => {
    const c = await client('postgres');
    try {
      await c.query(`drop database if exists ${database} with (force)`);
    } finally {
      await c.end();
    }
  });
  const sql = async (text: string, values: unknown[] = []) => {
    const c = await client(database);
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  await sql(SETUP);
  for (const o of ORDERS) {
    await sql('insert into sales.orders (customer, region, amount, quantity, ordered_on, shipped_at, paid, notes) values ($1, $2, $3, $4, $5, $6, $7, $8)', [
      o.customer,
      o.region,
      o.amount,
      o.quantity,
      o.orderedOn,
      o.shippedAt,
      o.paid,
      '{"a": 1}',
    ]);
  }
  await sql('analyze sales.orders');
  return { url: `postgres://postgres@${SERVER}/${database}`, database, sql };
}

/** Why the tests are skipped without a server, or false. */
export const skipWithout = (fixture: ExternalFixture | undefined) => (fixture ? false : `no PostgreSQL server at ${SERVER} to serve as the external database`);

/** A test kernel whose external databases may (or may not) be on private addresses (EXTERNAL_DB_ALLOW_PRIVATE). */
export async function buildWithSources(t: Teardown, allowPrivate: boolean): Promise<TestContext> {
  return build(t, { config: { externalDb: { ...testConfig().externalDb, ...externalDbConfig({ EXTERNAL_DB_ALLOW_PRIVATE: String(allowPrivate) }) } } });
}

/** The body of a source named `name` over the fixture (sslMode disable: the local server speaks no TLS). */
export const sourceBody = (fixture: ExternalFixture, extra: Record<string, unknown> = {}) => ({ name: 'warehouse', url: fixture.url, schemaName: 'sales', sslMode: 'disable', ...extra });

export async function addSource(as: BiUser, appId: string, body: Record<string, unknown>) {
  return expectStatus(await as.api('POST', `/api/bi/apps/${appId}/data-sources`, body), 201, `add source ${String(body.name)}`);
}
