// npm run scaffold -- <module> --entity <Name> --fields '...' [...]: a new
// module from the catalog template (templates/module/). --help for the syntax;
// the generator itself is the library in scripts/scaffold/.
import { run } from './scaffold/cli.ts';

try {
  process.exitCode = await run(process.argv.slice(2));
} catch (err) {
  console.error('scaffold: unexpected failure (a bug; nothing or only part was written):', err);
  process.exitCode = 1;
}
