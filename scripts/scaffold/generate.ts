// The generator: spec → validated plan → rendered files, all in memory. The
// manifest it renders must pass the kernel's own parseManifest and, together
// with the installed manifests, the kernel's loader; only then is a file list
// returned. Nothing here writes to the project.
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadManifests, parseManifest } from '../../core/manifest/loader.ts';
import type { Manifest } from '../../core/manifest/format.ts';
import { Problems, ScaffoldError, badInput } from './errors.ts';
import { FileList, display } from './files.ts';
import { DEFAULT_AREA, DEFAULT_PREFIX, conventionsOf, dependencyOrder, planEntity, planModule, type EntityPlan } from './model.ts';
import { camel, kebab } from './names.ts';
import { openProject, type Paths, type Project } from './project.ts';
import { loadTemplates, manifestView, testView, type Templates } from './render.ts';
import { addEntities } from './add-entity.ts';
import type { ModuleSpec } from './spec.ts';
import { planTest, type TestModule } from './test-plan.ts';
import { validateSpec } from './validate.ts';

export interface GenerateOptions {
  paths: Paths;
  /** problems found while reading the spec, reported together with the validation's */
  problems?: Problems;
  /** add the spec's entities to the installed module of the same id */
  addEntity?: boolean;
  templates?: Templates;
}

export interface Generated {
  files: FileList;
  /** things the developer should know (kept descriptions, new dependencies) */
  notes: string[];
  manifestFile: string;
}

export async function generate(spec: ModuleSpec, opts: GenerateOptions): Promise<Generated> {
  const templates = opts.templates ?? (await loadTemplates());
  const project = await openProject(opts.paths);
  const problems = opts.problems ?? new Problems();
  const result = opts.addEntity ? await addToModule(spec, project, templates, problems) : await newModule(spec, project, templates, problems);
  const conflicts = await result.files.conflicts(opts.paths.root);
  if (conflicts.length) throw new ScaffoldError('SCAFFOLD_EXISTS', conflicts);
  return result;
}

async function newModule(spec: ModuleSpec, project: Project, templates: Templates, problems: Problems): Promise<Generated> {
  const { paths } = project;
  const manifestFile = join(paths.manifestsDir, `${spec.module}.json`);
  const installed = project.manifests.find((l) => l.manifest.id === spec.module);
  if (installed || existsSync(manifestFile)) {
    throw new ScaffoldError('SCAFFOLD_EXISTS', [
      {
        where: `module "${spec.module}"`,
        message: `exists already (${display(installed ? resolve(installed.file) : manifestFile, paths.root)}); nothing was written. Add entities to it with --add-entity, or pick another module id`,
      },
    ]);
  }
  const prefix = spec.prefix ?? DEFAULT_PREFIX;
  validateSpec(spec, { project, prefix }, problems);
  const plan = planModule(spec, project, prefix);
  const text = templates.manifest(manifestView(plan));
  await kernelCheck(
    text,
    manifestFile,
    project,
    plan.entities.map((e) => e.name),
  );
  const files = new FileList();
  files.addFile({ path: manifestFile, contents: text, action: 'create' });
  addTests(files, plan.given, { id: plan.id, opPrefix: plan.opPrefix, viewCode: plan.viewCode, manageCode: plan.manageCode }, new Map(plan.given.map((e) => [e.name, e])), project, templates);
  return { files, notes: [], manifestFile };
}

async function addToModule(spec: ModuleSpec, project: Project, templates: Templates, problems: Problems): Promise<Generated> {
  const installed = project.manifests.find((l) => l.manifest.id === spec.module);
  if (!installed) {
    throw badInput(`module "${spec.module}"`, `is not installed in ${display(project.paths.manifestsDir, project.paths.root)}; scaffold it without --add-entity`);
  }
  const manifestFile = resolve(installed.file);
  const previous = await readFile(manifestFile, 'utf8');
  const manifest = installed.manifest;
  const conventions = conventionsOf(manifest);
  const area = spec.area ?? conventions.area ?? DEFAULT_AREA;
  const prefix = spec.prefix ?? conventions.prefix ?? DEFAULT_PREFIX;
  const codes = { view: `${area}:${manifest.id}:view`, manage: `${area}:${manifest.id}:manage` };
  const declared = new Set((manifest.permissions ?? []).map((p) => p.code));
  const missing = [codes.view, codes.manage].filter((c) => !declared.has(c));
  if (missing.length) throw badInput(`module "${spec.module}"`, `declares no ${missing.join(' or ')}, which the generated tests and menu use; give --area if its codes use another area`);
  validateSpec(spec, { project, existing: manifest, prefix }, problems);

  const added = spec.entities.map((e) => planEntity(e, manifest.id, prefix));
  const own = new Set([...(manifest.entities ?? []).map((e) => e.name), ...added.map((e) => e.name)]);
  const referenced = added
    .flatMap((e) => Object.values(e.definition.fields))
    .filter((f) => f.type === 'ref' && !own.has(f.entity!))
    .map((f) => project.entities.get(f.entity!)!.module);
  const dependsOn = [...new Set([...(spec.dependsOn ?? []), ...referenced])].filter((m) => m !== manifest.id);
  const { text, notes } = addEntities(previous, manifest, added, codes, dependsOn, templates);
  await kernelCheck(
    text,
    manifestFile,
    project,
    [...(manifest.entities ?? []), ...dependencyOrder(added)].map((e) => e.name),
  );

  const files = new FileList();
  files.addFile({ path: manifestFile, contents: text, action: 'update', previous });
  // Existing entities are targets the new tests may create rows of; their test files are never touched.
  const local = new Map<string, EntityPlan>(added.map((e) => [e.name, e]));
  for (const e of manifest.entities ?? []) {
    const route = (manifest.routes ?? []).find((r) => 'entity' in r && r.entity === e.name && (!r.operations || r.operations.includes('create')));
    local.set(e.name, { ...planEntity({ name: e.name, scope: e.scope, fields: [] }, manifest.id, prefix), definition: e, path: route?.path ?? '' });
  }
  addTests(files, added, { id: manifest.id, opPrefix: camel(manifest.id), viewCode: codes.view, manageCode: codes.manage }, local, project, templates);
  return { files, notes, manifestFile };
}

function addTests(files: FileList, entities: EntityPlan[], module: TestModule, local: Map<string, EntityPlan>, project: Project, templates: Templates): void {
  const problems = new Problems();
  for (const e of entities) {
    const file = join(project.paths.testsDir, module.id, `${kebab(e.name)}.test.ts`);
    const { view, problems: found } = planTest(e, module, local, project, file);
    problems.list.push(...found.list);
    files.addFile({ path: file, contents: templates.test(testView(view)), action: 'create' });
  }
  problems.throwIfAny();
}

/**
 * The kernel's verdict on the rendered manifest: parseManifest alone, then the
 * loader over the installed manifests plus this one (refs, codes, dependencies).
 * A fault is reported where the spec said it: "Product.price (scale): ...".
 */
async function kernelCheck(text: string, file: string, project: Project, entityOrder: string[]): Promise<void> {
  const shown = display(file, project.paths.root);
  const dir = await mkdtemp(join(tmpdir(), 'plinth-scaffold-'));
  try {
    parseManifest(text, shown);
    for (const name of await readdir(project.paths.manifestsDir)) {
      const source = join(project.paths.manifestsDir, name);
      if (name.endsWith('.json') && !name.endsWith('.schema.json') && resolve(source) !== resolve(file)) await copyFile(source, join(dir, name));
    }
    await writeFile(join(dir, `${(JSON.parse(text) as Manifest).id}.json`), text);
    await loadManifests(dir);
  } catch (err) {
    const e = err as Error & { pointer?: string; file?: string };
    if (e.name !== 'ManifestError') throw err;
    const reason = e.message.slice(e.message.indexOf(': ') + 2);
    const m = /^\/entities\/(\d+)(?:\/fields\/([^/]+)(?:\/(\w+))?|\/(\w+))?/.exec(e.pointer ?? '');
    const ours = !e.file || e.file === shown || e.file.endsWith(`${(JSON.parse(text) as Manifest).id}.json`);
    const entity = m && ours ? entityOrder[Number(m[1])] : undefined;
    const where = entity ? `${entity}${m![2] ? `.${m![2]}` : ''}${m![3] ? ` (${m![3]})` : m![4] ? ` (${m![4]})` : ''}` : `${ours ? shown : e.file}${e.pointer ? `#${e.pointer}` : ''}`;
    throw badInput(where, reason);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
