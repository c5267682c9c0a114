// npm run docs: (re)writes the reference pages under docs/reference/ from the code.
// npm run docs:check: fails, naming the file and what to run, when a page is not
// what the code makes now, or when a relative link in README.md or docs/**/*.md
// leads nowhere (a missing file, or an anchor no heading of its target makes).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationPage } from './configuration.ts';
import { eventsPage } from './events.ts';
import { brokenLinks } from './links.ts';
import { manifestPage } from './manifest.ts';
import { prettyMarkdown, ROOT } from './markdown.ts';
import { openApiDocument } from './openapi.ts';
import { problemsPage } from './problems.ts';
import { sdkPage } from './sdk.ts';

const DIR = 'docs/reference';
const check = process.argv.includes('--check');

async function pages(): Promise<Record<string, string>> {
  const doc = await openApiDocument();
  return {
    'configuration.md': configurationPage(),
    'manifest.md': manifestPage(),
    'sdk.md': sdkPage(),
    'problems.md': problemsPage(doc),
    'events.md': eventsPage(doc),
  };
}

const failures: string[] = [];
for (const [name, text] of Object.entries(await pages())) {
  const file = join(DIR, name);
  const page = await prettyMarkdown(`${text}\n`, join(ROOT, file));
  const path = join(ROOT, file);
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  if (check) {
    if (current !== page) failures.push(`${file} is ${current === undefined ? 'missing' : 'out of date'}: run npm run docs (and commit it)`);
  } else if (current !== page) {
    mkdirSync(join(ROOT, DIR), { recursive: true });
    writeFileSync(path, page);
    console.log(`wrote ${file}`);
  }
}
if (check) failures.push(...brokenLinks());
for (const f of failures) console.error(f);
if (failures.length) process.exit(1);
if (check) console.log('docs: reference pages are current, links resolve');
