// Command-line arguments of `npm run scaffold`, and its help text. Entity
// options (--fields, --label, ...) apply to the --entity before them.
import { Problems, didYouMean } from './errors.ts';
import { OPTIONS as FIELD_OPTIONS, SWITCHES as FIELD_SWITCHES } from './field-syntax.ts';
import type { Scope } from './spec.ts';

export interface EntityArgs {
  name: string;
  fields: string[];
  label?: string;
  plural?: string;
  icon?: string;
  scope?: Scope;
  columns?: string[];
  defaultSort?: string;
}

export interface CliArgs {
  module?: string;
  entities: EntityArgs[];
  name?: string;
  description?: string;
  area?: string;
  prefix?: string;
  dependsOn?: string[];
  spec?: string;
  dryRun: boolean;
  addEntity: boolean;
  help: boolean;
  root?: string;
  manifestsDir?: string;
  testsDir?: string;
}

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const ENTITY_OPTIONS: Record<string, (e: EntityArgs, v: string, problems: Problems) => void> = {
  '--fields': (e, v) => {
    e.fields.push(v);
  },
  '--label': (e, v) => {
    e.label = v;
  },
  '--plural': (e, v) => {
    e.plural = v;
  },
  '--icon': (e, v) => {
    e.icon = v;
  },
  '--scope': (e, v, problems) => {
    if (v === 'company' || v === 'tenant') e.scope = v;
    else problems.add(`${e.name} --scope`, `"${v}": company (rows belong to the request's company) or tenant`);
  },
  '--columns': (e, v) => {
    e.columns = list(v);
  },
  '--default-sort': (e, v) => {
    e.defaultSort = v;
  },
};

const MODULE_OPTIONS: Record<string, (a: CliArgs, v: string) => void> = {
  '--name': (a, v) => {
    a.name = v;
  },
  '--description': (a, v) => {
    a.description = v;
  },
  '--area': (a, v) => {
    a.area = v;
  },
  '--prefix': (a, v) => {
    a.prefix = v;
  },
  '--depends-on': (a, v) => {
    a.dependsOn = list(v);
  },
  '--spec': (a, v) => {
    a.spec = v;
  },
  '--root': (a, v) => {
    a.root = v;
  },
  '--manifests-dir': (a, v) => {
    a.manifestsDir = v;
  },
  '--tests-dir': (a, v) => {
    a.testsDir = v;
  },
};

const SWITCHES: Record<string, (a: CliArgs) => void> = {
  '--dry-run': (a) => {
    a.dryRun = true;
  },
  '--add-entity': (a) => {
    a.addEntity = true;
  },
  '--help': (a) => {
    a.help = true;
  },
  '-h': (a) => {
    a.help = true;
  },
};

export function parseArgs(argv: string[]): { args: CliArgs; problems: Problems } {
  const args: CliArgs = { entities: [], dryRun: false, addEntity: false, help: false };
  const problems = new Problems();
  const known = ['--entity', ...Object.keys(ENTITY_OPTIONS), ...Object.keys(MODULE_OPTIONS), ...Object.keys(SWITCHES)];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    const value = (): string | undefined => {
      if (eq > 0) return arg.slice(eq + 1);
      if (i + 1 < argv.length) return argv[++i];
      problems.add(flag, 'needs a value');
      return undefined;
    };
    if (SWITCHES[flag]) {
      if (eq > 0) problems.add(flag, 'takes no value');
      SWITCHES[flag](args);
    } else if (flag === '--entity') {
      const name = value();
      if (name !== undefined) args.entities.push({ name, fields: [] });
    } else if (ENTITY_OPTIONS[flag]) {
      const v = value();
      const entity = args.entities.at(-1);
      if (!entity) problems.add(flag, `applies to an entity: put it after --entity <Name>`);
      else if (v !== undefined) ENTITY_OPTIONS[flag](entity, v, problems);
    } else if (MODULE_OPTIONS[flag]) {
      const v = value();
      if (v !== undefined) MODULE_OPTIONS[flag](args, v);
    } else if (arg.startsWith('-')) {
      problems.add(flag, `unknown option${didYouMean(flag, known)}; see --help`);
    } else if (args.module === undefined) {
      args.module = arg;
    } else {
      problems.add(arg, `unexpected argument (the module is "${args.module}"); entity names follow --entity`);
    }
  }
  return { args, problems };
}

/** Words joined into lines of at most 100 characters, each line indented. */
function wrapWords(items: string[], indent: string): string {
  const lines: string[] = [];
  for (const item of items) {
    if (lines.length && lines[lines.length - 1].length + item.length < 100) lines[lines.length - 1] += ` ${item}`;
    else lines.push(`${indent}${item}`);
  }
  return lines.join('\n');
}

export const HELP = `Scaffold a module from the catalog template: its manifest and its tests.

Usage:
  npm run scaffold -- <module> --entity <Name> [--fields '<fields>'] [--entity <Name> ...] [options]
  npm run scaffold -- <module> --add-entity --entity <Name> --fields '<fields>'
  npm run scaffold -- --spec <file.json> [--dry-run]

Writes manifests/<module>.json and test/plugins/<module>/<entity>.test.ts per
entity. The module loads on the next start; its tests run with npm test.

Module options:
  --area <area>            permission codes <area>:<module>:view|manage (default erp)
  --prefix <path>          route prefix (default /api): <prefix>/<plural-kebab-of-entity>
  --name <text>            display name (default: from the id, "sales-crm" → "Sales Crm")
  --description <text>     module description
  --depends-on <a,b>       extra dependencies (core, and modules of referenced entities, are added)
  --spec <file.json>       everything above and the entities as JSON (see templates/module/README.md)
  --add-entity             add the entities to an existing module; nothing existing is rewritten
  --dry-run                print the files and their contents; write nothing
  --root <dir>             project root (default: the current directory)
  --manifests-dir <dir>    default <root>/manifests (or MANIFESTS_DIR)
  --tests-dir <dir>        default <root>/test/plugins

Entity options (apply to the --entity before them):
  --fields '<fields>'      the entity's fields, see below (may repeat)
  --label <text>           display label (default: from the name, "SalesOrder" → "Sales order")
  --plural <Name>          plural when the English rule fails: --entity Person --plural People
  --icon <name>            menu icon
  --scope company|tenant   company (default): rows belong to the request's company
  --columns <a,b>          list columns (default: up to three required fields, then the first boolean)
  --default-sort <sort>    e.g. name or -createdAt (default: name if sortable)

Fields: name:type[(args)][flags][:modifier...], separated by commas. Quote the
whole list in single quotes: the shell would read ( ) ! * ? # otherwise.

  types      string[(maxLength)]  text[(maxLength)]  integer  decimal[(precision[,scale])]
             boolean  date  datetime  enum(a|b|c)  json  ref(Entity)
  flags      !  required        *  translatable     ~  search (matched by ?search=)
             ^  sort            =  filter (a list query parameter)      #  unique
  modifiers  :required :translatable :search :sort :filter :unique (the flags, spelled out)
             :index  :internal (stored, never in the API)  :list (a list column)
             :label="Text"  :description="Text"  :default=<value>  :min=<n>  :max=<n>
             :minLength=<n>  :maxLength=<n>  :pattern="<regex>"  :precision=<n>  :scale=<n>
             :values=a|b|c  :onDelete=restrict|cascade|setNull  :widget=<name>
             :example=<value>  (a valid value for the generated tests, e.g. for a pattern)
  Every option of a manifest field is a modifier; the full list, from the kernel's schema:
${wrapWords([...FIELD_SWITCHES.map((s) => `:${s}`), ...FIELD_OPTIONS.map((o) => `:${o}=`)], '             ')}

  A ref field is named after its target with an "Id" suffix (categoryId:ref(Category));
  the target is an entity of this module or of an installed one. Defaults take the
  field's type: default=0 is a number for integers, default=null is null.

Example:
  npm run scaffold -- assets \\
    --entity Location --icon map --fields 'code:string(20)!#^~,name:string(120)!*^~,isActive:boolean=:default=true' \\
    --entity Asset --icon box --fields 'tag:string(40)!#^~:pattern="^[A-Z0-9-]+$",name:string(200)!*^~,
      value:decimal(12,2)^=:min=0,status:enum(active|repair|retired)=:default=active,locationId:ref(Location)!='

Exit codes: 0 done, 2 bad input (nothing written), 3 the module or a file exists (nothing written).`;
