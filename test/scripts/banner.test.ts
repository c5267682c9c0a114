// The first start: on a terminal a text banner (address, demo logins, where the
// data lives) instead of the JSON ready line; demo data in every module's lists.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { banner, describeDatabase } from '../../scripts/banner.ts';
import { preparePgliteSnapshot } from '../helper.ts';

t.test('where the data lives, without a password', async (t) => {
  const base = { dataDir: '/srv/plinth', pgliteInMemory: false };
  t.equal(describeDatabase({ ...base, databases: {} }), 'embedded PGlite in /srv/plinth/pglite');
  t.match(describeDatabase({ ...base, pgliteInMemory: true, databases: {} }), /in memory/);
  const pg = describeDatabase({ ...base, databases: { main: 'postgres://plinth:s3cret@db.internal:5432/plinth' } });
  t.equal(pg, 'PostgreSQL postgres://plinth@db.internal:5432/plinth');
  t.notMatch(describeDatabase({ ...base, databases: { main: 'not a url s3cret' } }), /s3cret/, 'an unparsable URL is not echoed');
});

t.test('the banner names the address, the logins and the data', async (t) => {
  const text = banner({
    url: 'http://127.0.0.1:3000',
    database: 'embedded PGlite in ./data/pglite',
    modules: ['core', 'catalog', 'crm'],
    migrating: 0,
    readyMs: 812,
    logins: [
      { tenant: 'demo', email: 'admin@demo.plinth.dev', password: 'plinth-demo', what: 'administrator' },
      { tenant: 'platform', email: 'ops@example.com', what: 'platform operator' },
    ],
  });
  t.match(text, 'http://127.0.0.1:3000/api-docs');
  t.match(text, /tenant "demo"\s+admin@demo\.plinth\.dev\s+password "plinth-demo"/);
  t.match(text, /ops@example\.com\s+\(password from PLATFORM_ADMIN_PASSWORD\)/, 'a configured password is not known, so not shown');
  t.match(text, 'embedded PGlite in ./data/pglite');
  t.notMatch(text, /^\{/m, 'text, not JSON');
});

t.test('npm start on a terminal: a banner, demo logins that work, lists that are not empty', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plinth-first-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PGLITE_MEMORY: 'true',
    PGLITE_SNAPSHOT: await preparePgliteSnapshot(),
    PORT: '0',
    HOST: '127.0.0.1',
    WORKERS: 'false',
    PROVISION_SPARES: '0',
  };
  // a terminal as the process sees one: stdout.isTTY set before the server loads
  const args = ['--import', 'data:text/javascript,process.stdout.isTTY=true', 'scripts/start.ts'];
  const child = spawn(join(process.cwd(), 'node_modules/.bin/node'), args, { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = await new Promise<boolean>((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (/Stop with Ctrl\+C/.test(stdout)) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!ready) return t.fail(`the server did not start: ${stderr}${stdout}`);
  t.notMatch(stdout, /"msg":"Plinth ready/, 'no JSON ready line on a terminal');
  t.match(stdout, /tenant "demo"\s+admin@demo\.plinth\.dev\s+password "plinth-demo"/, 'the demo login');
  t.match(stdout, /tenant "platform"\s+operator@plinth\.dev\s+password "plinth-operator"/, 'the demo operator');
  t.match(stdout, /Data\s+embedded PGlite in memory/, 'where the data lives');
  t.match(stdout, /Demo data\s+created now:(\s+\d+ [a-z-]+ rows,?)+/, 'what the first start created');
  for (const module of ['pm', 'ai', 'bi', 'catalog', 'crm']) t.match(stdout, new RegExp(`\\b\\d+ ${module} rows`), `with the ${module} module's rows`);
  t.notMatch(stdout, /"msg":"demo tenant/, "the seed's log lines say nothing the banner does not");
  const listening = stdout.indexOf('Server listening');
  t.ok(listening >= 0 && listening < stdout.indexOf('Plinth is ready'), 'log lines written before the banner come before it');
  const base = /API docs\s+(http:\/\/\S+)\/api-docs/.exec(stdout)?.[1];
  if (!base) return t.fail(`no address in ${stdout}`);
  const consolePage = await fetch(/Console\s+(http:\/\/\S+\/)/.exec(stdout)?.[1] ?? 'http://invalid.test/');
  t.equal(consolePage.status, 200, 'the console address answers…');
  t.match(await consolePage.text(), /name="password"/, '…with the login form');

  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'demo', email: 'admin@demo.plinth.dev', password: 'plinth-demo' }),
  });
  t.equal(login.status, 200, 'the demo login works');
  const { accessToken } = (await login.json()) as { accessToken: string };
  for (const path of ['/api/products', '/api/crm/customers', '/api/crm/contacts', '/api/crm/leads', '/api/crm/opportunities', '/api/crm/quotes', '/api/crm/activities']) {
    const res = await fetch(`${base}${path}?size=1`, { headers: { authorization: `Bearer ${accessToken}` } });
    t.equal(res.status, 200, path);
    t.ok(((await res.json()) as { total: number }).total > 0, `${path} is not empty`);
  }
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'exits 0');
  t.equal(stderr.trim(), '', 'nothing on stderr');
});
