// --add-entity: new entities go into an existing manifest as text edits. The
// existing entities, routes, menu entries and every other byte stay as they
// are; new entries are appended, the module's view/manage grants name the new
// entities too, and a permission description is rewritten only while it is
// still the one the scaffolder generated.
import type { Manifest } from '../../core/manifest/format.ts';
import { dependencyOrder, manageDescription, viewDescription, type EntityPlan } from './model.ts';
import { pluralLabel, entityLabel } from './names.ts';
import { addMember, appendToArray, applyEdits, member, replaceValue, scan, type Edit } from './json-edit.ts';
import { entityView, menuView, inline, type Templates } from './render.ts';

export interface AddResult {
  text: string;
  notes: string[];
}

export function addEntities(text: string, manifest: Manifest, added: EntityPlan[], codes: { view: string; manage: string }, dependsOn: string[], templates: Templates): AddResult {
  const root = scan(text);
  const edits: Edit[] = [];
  const notes: string[] = [];
  const append = (key: string, elements: string[]) => {
    const node = member(root, key);
    if (node) edits.push(appendToArray(text, node, elements));
    else edits.push(addMember(text, root, key, `[\n  ${elements.map((e) => e.replace(/\n/g, '\n  ')).join(',\n  ')}\n]`));
  };

  append(
    'entities',
    dependencyOrder(added).map((e) => templates.entity(entityView(e))),
  );
  append(
    'routes',
    dependencyOrder(added).map((e) => templates.route(entityView(e))),
  );
  append(
    'menu',
    added.map((e) => templates.menuItem(menuView(e, codes.view))),
  );

  const newDeps = dependsOn.filter((d) => !(manifest.dependsOn ?? []).includes(d));
  if (newDeps.length) {
    append(
      'dependsOn',
      newDeps.map((d) => JSON.stringify(d)),
    );
    notes.push(`dependsOn gains ${newDeps.join(', ')} (referenced by the new entities)`);
  }

  const own = new Set((manifest.entities ?? []).map((e) => e.name));
  const names = added.map((e) => e.name);
  const permissions = member(root, 'permissions');
  (manifest.permissions ?? []).forEach((p, i) => {
    if (p.code !== codes.view && p.code !== codes.manage) return;
    const node = permissions?.kind === 'array' ? permissions.items[i] : undefined;
    const grants = member(node, 'grants');
    p.grants.forEach((g, j) => {
      const subjects = [g.subject].flat();
      // Only plain grants over this module's own entities widen; conditional or field-limited ones are the developer's.
      if (g.conditions || g.fields || g.inverted || !subjects.every((s) => own.has(s))) return;
      const subject = member(grants?.kind === 'array' ? grants.items[j] : undefined, 'subject');
      if (!subject) return;
      edits.push(
        subject.kind === 'array'
          ? appendToArray(
              text,
              subject,
              names.map((n) => JSON.stringify(n)),
            )
          : replaceValue(subject, inline([...subjects, ...names])),
      );
    });
    const previous = subjectOrder(manifest, codes.view).map((name) => pluralLabel(manifest.entities!.find((e) => e.name === name)?.label ?? entityLabel(name)));
    const describe = p.code === codes.view ? viewDescription : manageDescription;
    const description = member(node, 'description');
    if (description && p.description === describe(previous)) {
      edits.push(replaceValue(description, JSON.stringify(describe([...previous, ...added.map((e) => e.pluralLabel)]))));
    } else if (description) {
      notes.push(`kept the description of ${p.code} (it is not the generated one); mention ${added.map((e) => e.pluralLabel).join(', ')} there if it lists entities`);
    }
  });
  return { text: applyEdits(text, edits), notes };
}

/** The module's entities in the order its view grant names them (the order the scaffolder was given). */
function subjectOrder(manifest: Manifest, viewCode: string): string[] {
  const grant = manifest.permissions?.find((p) => p.code === viewCode)?.grants[0];
  const own = (manifest.entities ?? []).map((e) => e.name);
  const named = grant ? [grant.subject].flat().filter((s) => own.includes(s)) : [];
  return named.length ? named : own;
}
