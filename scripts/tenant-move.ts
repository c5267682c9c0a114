// npm run tenant:move -- --id acme --to eu2 [--drop-source-after 30]
// Moves a tenant to the database of another connection key (DATABASE_URL_<KEY>):
// its rows are copied, counted and checksummed while its writes are held, and the
// registry switched (core/tenancy/move.ts). The source schema is kept, its writes
// refused, until --drop-source-after seconds have passed (every server has
// heard of the switch by then); without the option it is left for
// `npm run tenant:move -- --id acme --drop-source main`.
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../core/config.ts';
import { openKernel } from '../core/kernel.ts';
import { dropMovedSource, moveTenant } from '../core/tenancy/move.ts';

const { values: v } = parseArgs({ options: { id: { type: 'string' }, to: { type: 'string' }, 'drop-source-after': { type: 'string' }, 'drop-source': { type: 'string' } } });
if (!v.id || (!v.to && !v['drop-source'])) {
  console.error(
    'usage: npm run tenant:move -- --id <tenant> --to <connection key> [--drop-source-after <seconds>]\n       npm run tenant:move -- --id <tenant> --drop-source <connection key it left>',
  );
  process.exit(2);
}
const kernel = await openKernel(loadConfig());
try {
  if (v['drop-source']) {
    await dropMovedSource(kernel, v.id, v['drop-source']);
    console.log(`dropped the schema tenant ${v.id} left on "${v['drop-source']}"`);
  } else {
    const r = await moveTenant(kernel, v.id, v.to!, {
      onTable: (t) => console.log(`  ${t.table}: ${t.rows} row(s), checksum ${t.checksum}`),
      onLockRetry: (attempt, reason) => console.log(`  lock on the source tables, attempt ${attempt}: ${reason}; writes queued behind it went on; asking again`),
    });
    console.log(
      `moved tenant ${r.tenant} from "${r.from}" to "${r.to}" in ${r.totalMs} ms; its writes were held for ${r.writesHeldMs} ms${r.catchUp === 'copied-again' ? ' (rows that swapped a unique value meanwhile: copied again whole under the lock)' : ''}`,
    );
    const after = Number(v['drop-source-after']);
    if (v['drop-source-after'] !== undefined && Number.isFinite(after) && after >= 0) {
      await sleep(after * 1000);
      await dropMovedSource(kernel, r.tenant, r.from);
      console.log(`dropped the source schema on "${r.from}"`);
    } else {
      console.log(`the source schema stays on "${r.from}" (its writes refused); drop it with: npm run tenant:move -- --id ${r.tenant} --drop-source ${r.from}`);
    }
  }
} catch (err) {
  const { code, message } = err as { code?: string; message: string };
  console.error(`tenant move failed${code ? ` (${code})` : ''}: ${message}`);
  process.exitCode = 1;
} finally {
  await kernel.close();
}
