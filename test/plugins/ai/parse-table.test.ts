// The assistant's parser, sentence by sentence: POST /api/ai/assistant/parse
// with a fixed reference time (Tuesday 2026-03-10 10:00 in Europe/Berlin) and
// the expected title, due date and time, priority, assignee, project and
// warnings of each. Dates in several languages chrono reads; @names and
// #projects matched among what the caller may read, with ambiguity and misses;
// people and projects named without @ or # in English, German, French and Spanish.
import t from 'tap';
import { build } from '../../helper.ts';
import { assistantTenant, expectStatus } from './assistant-fixture.ts';

const ctx = await build(t);
const table = await assistantTenant(ctx, await ctx.tenant());
// free-text names in a tenant of their own (a project named "Field service app" would be a near miss of #SEC):
// more people, two projects of one name, and a user who left
const named = await assistantTenant(ctx, await ctx.tenant());
for (const name of ['Tom Becker', 'Aiko Tanaka', 'Lucía Fernández', 'Otto Left']) named.people[name] = await named.person(name);
expectStatus(await named.admin('PATCH', `/api/users/${named.people['Otto Left'].id}`, { isActive: false }), 200, 'Otto leaves');
for (const p of [
  { key: 'FSA', name: 'Field service app' },
  { key: 'SUP', name: 'Support' },
  { key: 'HELP', name: 'Support' },
])
  named.projects[p.key] = expectStatus(await named.caller.api('POST', '/api/pm/projects', p), 201, `project ${p.key}`);

const NOW = '2026-03-10T09:00:00Z';
const ZONE = 'Europe/Berlin';

interface Expected {
  title?: string;
  dueDate?: string | null;
  dueTime?: string | null;
  dueAt?: string | null;
  priority?: string;
  /** a person's name, or null */
  assignee?: string | null;
  /** a project key, or null */
  project?: string | null;
  /** people / project keys offered as alternatives */
  alternatives?: string[];
  /** warning codes, exactly (default none) */
  warnings?: string[];
}
interface Case {
  text: string;
  language?: string;
  headers?: Record<string, string>;
  timeZone?: string;
  now?: string;
  expect: Expected;
}

const CASES: Case[] = [
  // English dates and times
  {
    text: 'call Acme tomorrow at 3pm about the renewal, urgent, @maria #WEB',
    expect: { title: 'Call Acme about the renewal', dueDate: '2026-03-11', dueTime: '15:00', dueAt: '2026-03-11T14:00:00.000Z', priority: 'high', assignee: 'Maria Rossi', project: 'WEB' },
  },
  { text: 'Send invoice today', expect: { title: 'Send invoice', dueDate: '2026-03-10', dueTime: null, dueAt: null } },
  { text: 'Review contract next Friday', expect: { title: 'Review contract', dueDate: '2026-03-20' } },
  { text: 'Pay rent on Friday', expect: { title: 'Pay rent', dueDate: '2026-03-13' } },
  { text: 'Book flights in 3 days', expect: { title: 'Book flights', dueDate: '2026-03-13' } },
  { text: 'Renew domain by 2026-04-01', expect: { title: 'Renew domain', dueDate: '2026-04-01', dueTime: null } },
  { text: 'Team lunch at noon', expect: { title: 'Team lunch', dueDate: '2026-03-10', dueTime: '12:00' } },
  { text: 'Standup tomorrow 9:30', expect: { title: 'Standup', dueDate: '2026-03-11', dueTime: '09:30' } },
  { text: 'Submit report by March 31', expect: { title: 'Submit report', dueDate: '2026-03-31' } },
  { text: 'Dentist on 3/12 at 8am', expect: { title: 'Dentist', dueDate: '2026-03-12', dueTime: '08:00' } },
  { text: 'Check backups in 2 hours', expect: { title: 'Check backups', dueDate: '2026-03-10', dueTime: '12:00' } },
  { text: 'Order supplies yesterday', expect: { title: 'Order supplies', dueDate: '2026-03-09', warnings: ['DATE_IN_PAST'] } },
  { text: 'Call back today at 8am', expect: { title: 'Call back', dueDate: '2026-03-10', dueTime: '08:00', warnings: ['DATE_IN_PAST'] } },
  { text: 'Call Acme tomorrow and on Friday', expect: { dueDate: '2026-03-11', warnings: ['SEVERAL_DATES'] } },
  // other languages, by the language field
  { text: 'Angebot an @hans schicken bis Freitag, dringend', language: 'de', expect: { title: 'Angebot schicken', dueDate: '2026-03-13', priority: 'high', assignee: 'Hans Müller' } },
  { text: 'Meeting morgen um 15 Uhr', language: 'de', expect: { title: 'Meeting', dueDate: '2026-03-11', dueTime: '15:00' } },
  { text: 'Rechnung prüfen übermorgen', language: 'de', expect: { title: 'Rechnung prüfen', dueDate: '2026-03-12' } },
  { text: 'Server neu starten am 20. März, kritisch', language: 'de', expect: { title: 'Server neu starten', dueDate: '2026-03-20', priority: 'critical' } },
  { text: 'Appeler le client demain à 15h, priorité haute', language: 'fr', expect: { title: 'Appeler le client', dueDate: '2026-03-11', dueTime: '15:00', priority: 'high' } },
  { text: 'Préparer la réunion lundi prochain', language: 'fr', expect: { title: 'Préparer la réunion', dueDate: '2026-03-16' } },
  { text: 'Enviar presupuesto mañana a las 3pm, urgente', language: 'es', expect: { title: 'Enviar presupuesto', dueDate: '2026-03-11', dueTime: '15:00', priority: 'high' } },
  { text: 'Revisar el contrato el viernes', language: 'es', expect: { title: 'Revisar el contrato', dueDate: '2026-03-13' } },
  { text: 'Ligar para o cliente amanhã', language: 'pt', expect: { title: 'Ligar para o cliente', dueDate: '2026-03-11', dueTime: null } },
  { text: 'Offerte versturen morgen om 15:00', language: 'nl', expect: { title: 'Offerte versturen', dueDate: '2026-03-11', dueTime: '15:00' } },
  { text: 'Chiamare il fornitore domani alle 15', language: 'it', expect: { title: 'Chiamare il fornitore', dueDate: '2026-03-11', dueTime: '15:00' } },
  { text: '明日15時 会議の準備', language: 'ja', expect: { title: '会議の準備', dueDate: '2026-03-11', dueTime: '15:00' } },
  // the language from Accept-Language
  { text: 'Meeting morgen um 15 Uhr', headers: { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' }, expect: { title: 'Meeting', dueDate: '2026-03-11', dueTime: '15:00' } },
  { text: 'Réunion demain à 9h', headers: { 'accept-language': 'xx, fr-CA;q=0.8' }, expect: { title: 'Réunion', dueDate: '2026-03-11', dueTime: '09:00' } },
  // the caller's time zone decides "today" and the instant
  {
    text: 'Call at 9am tomorrow',
    timeZone: 'America/New_York',
    now: '2026-03-10T03:00:00Z',
    expect: { title: 'Call', dueDate: '2026-03-10', dueTime: '09:00', dueAt: '2026-03-10T13:00:00.000Z' },
  },
  {
    text: 'Tokyo sync today at 18:00',
    timeZone: 'Asia/Tokyo',
    now: '2026-03-10T20:00:00Z',
    expect: { title: 'Tokyo sync', dueDate: '2026-03-11', dueTime: '18:00', dueAt: '2026-03-11T09:00:00.000Z' },
  },
  // priorities
  { text: 'Fix login bug asap', expect: { title: 'Fix login bug', priority: 'high', dueDate: null } },
  { text: 'Database is down, critical!', expect: { title: 'Database is down', priority: 'critical' } },
  { text: '!!! production outage', expect: { title: 'Production outage', priority: 'critical' } },
  { text: 'Update docs !!', expect: { title: 'Update docs', priority: 'high' } },
  { text: 'Clean up old branches, low priority', expect: { title: 'Clean up old branches', priority: 'low' } },
  { text: 'Archive mails whenever', expect: { title: 'Archive mails', priority: 'low' } },
  { text: 'Refactor parser p1', expect: { title: 'Refactor parser', priority: 'critical' } },
  { text: 'Write tests p4', expect: { title: 'Write tests', priority: 'low' } },
  { text: 'Rename variables priority: high', expect: { title: 'Rename variables', priority: 'high' } },
  { text: 'Water the plants', expect: { title: 'Water the plants', priority: 'normal', dueDate: null, assignee: null, project: null } },
  { text: 'Migrate the database, urgent, low priority', expect: { title: 'Migrate the database', priority: 'high' } },
  { text: 'Kunden anrufen, wichtig', language: 'de', expect: { title: 'Kunden anrufen', priority: 'high' } },
  { text: 'Nettoyer le code, pas urgent', language: 'fr', expect: { title: 'Nettoyer le code', priority: 'low' } },
  { text: 'Actualizar la web, sin prisa', language: 'es', expect: { title: 'Actualizar la web', priority: 'low' } },
  { text: 'Pagar fornecedor, urgente', language: 'pt', expect: { title: 'Pagar fornecedor', priority: 'high' } },
  // @users
  { text: '@maria.rossi review the design', expect: { title: 'Review the design', assignee: 'Maria Rossi' } },
  { text: 'Ask @mario about invoices', expect: { title: 'Ask about invoices', assignee: 'Mario Bianchi' } },
  { text: 'Pair with @anna on the release', expect: { assignee: null, alternatives: ['Anna Keller', 'Anna Schmidt'], warnings: ['AMBIGUOUS_USER'] } },
  { text: 'Lunch with @jorg', expect: { title: 'Lunch', assignee: 'Jörg Weber' } },
  { text: 'Send the slides to @hans.muller', expect: { title: 'Send the slides', assignee: 'Hans Müller' } },
  { text: 'Check numbers for @rossi', expect: { title: 'Check numbers', assignee: 'Maria Rossi' } },
  { text: 'Ping @nobody about it', expect: { assignee: null, alternatives: [], warnings: ['UNKNOWN_USER'] } },
  { text: 'Sync @maria and @hans', expect: { assignee: 'Maria Rossi', warnings: ['SEVERAL_USERS'] } },
  { text: 'Email bob@example.com the offer', expect: { title: 'Email bob@example.com the offer', assignee: null } },
  // #projects
  { text: 'Fix header #WEB', expect: { title: 'Fix header', project: 'WEB' } },
  { text: 'Fix footer #web', expect: { title: 'Fix footer', project: 'WEB' } },
  { text: 'Write SDK docs #public-api', expect: { title: 'Write SDK docs', project: 'API' } },
  { text: 'Tidy icons in #mobile', expect: { title: 'Tidy icons', project: 'MOB' } },
  { text: 'Launch campaign #marketing', expect: { project: null, alternatives: ['MKE', 'MKT'], warnings: ['AMBIGUOUS_PROJECT'] } },
  { text: 'Read the plan #SEC', expect: { title: 'Read the plan', project: null, warnings: ['UNKNOWN_PROJECT'] } },
  { text: 'Plan sprint #WEB #API', expect: { title: 'Plan sprint', project: 'WEB', warnings: ['SEVERAL_PROJECTS'] } },
  // what stays in the title
  { text: 'tomorrow urgent', expect: { title: '', dueDate: '2026-03-11', priority: 'high', warnings: ['EMPTY_TITLE'] } },
  { text: 'C# migration #1 review', expect: { title: 'C# migration #1 review', project: null } },
];

// people and projects by name, without @ or #: a cue word ties the name to the sentence
// (remind … to, assign to …:, … should, with, for, in) and goes with it; "call Maria" names whom to call
const NAMES: Case[] = [
  // English
  { text: 'remind Maria to send the Q3 report by next Friday', expect: { title: 'Send the Q3 report', assignee: 'Maria Rossi', dueDate: '2026-03-20' } },
  {
    text: 'remind Anna to send the Q3 report by next Friday',
    expect: { title: 'Send the Q3 report', assignee: null, dueDate: '2026-03-20', alternatives: ['Anna Keller', 'Anna Schmidt'], warnings: ['AMBIGUOUS_USER'] },
  },
  { text: 'assign to Tom: fix the login page', expect: { title: 'Fix the login page', assignee: 'Tom Becker' } },
  { text: 'Assign Tom: fix the login page', expect: { title: 'Fix the login page', assignee: 'Tom Becker' } },
  { text: 'Maria should check the contract', expect: { title: 'Check the contract', assignee: 'Maria Rossi' } },
  { text: 'Tom will deploy the hotfix, urgent', expect: { title: 'Deploy the hotfix', assignee: 'Tom Becker', priority: 'high' } },
  { text: 'Tom: update the changelog', expect: { title: 'Update the changelog', assignee: 'Tom Becker' } },
  { text: 'Tomorrow Maria should call the bank', expect: { title: 'Call the bank', assignee: 'Maria Rossi', dueDate: '2026-03-11' } },
  { text: 'Lunch with Aiko', expect: { title: 'Lunch', assignee: 'Aiko Tanaka' } },
  { text: 'Pair with Anna Keller on the release', expect: { title: 'Pair on the release', assignee: 'Anna Keller' } },
  { text: 'Check the numbers with Jorg', expect: { title: 'Check the numbers', assignee: 'Jörg Weber' } },
  { text: 'Ask maria.rossi to renew the domain', expect: { title: 'Renew the domain', assignee: 'Maria Rossi' } },
  { text: 'Write the manual for the Field service app', expect: { title: 'Write the manual', project: 'FSA' } },
  { text: 'Fix the crash in the mobile app', expect: { title: 'Fix the crash', project: 'MOB' } },
  { text: 'Plan the launch for Website relaunch project', expect: { title: 'Plan the launch', project: 'WEB' } },
  { text: 'Review the endpoints in API', expect: { title: 'Review the endpoints', project: 'API' } },
  { text: 'Ask Aiko to review the design for the Field service app', expect: { title: 'Review the design', assignee: 'Aiko Tanaka', project: 'FSA' } },
  { text: 'Draft the FAQ for Support', expect: { title: 'Draft the FAQ', project: null, alternatives: ['HELP', 'SUP'], warnings: ['AMBIGUOUS_PROJECT'] } },
  { text: 'Remind Tom to book the room with Aiko', expect: { title: 'Book the room with Aiko', assignee: 'Tom Becker', warnings: ['SEVERAL_USERS'] } },
  { text: 'Lunch with Tom @maria', expect: { title: 'Lunch with Tom', assignee: 'Maria Rossi', warnings: ['SEVERAL_USERS'] } },
  { text: 'Fix the header #WEB for the mobile app', expect: { title: 'Fix the header for the mobile app', project: 'WEB', warnings: ['SEVERAL_PROJECTS'] } },
  // named, but not the one who does it, or no one the caller can pick
  { text: 'call Maria tomorrow', expect: { title: 'Call Maria', assignee: null, dueDate: '2026-03-11' } },
  { text: 'Email Tom the offer', expect: { title: 'Email Tom the offer', assignee: null } },
  { text: 'remind me to call Maria', expect: { title: 'Remind me to call Maria', assignee: null } },
  { text: 'remind Otto to file the expenses', expect: { title: 'Remind Otto to file the expenses', assignee: null } },
  { text: 'Review the api docs', expect: { title: 'Review the api docs', project: null } },
  { text: 'Share the plan with the team in Secret plans', expect: { title: 'Share the plan with the team in Secret plans', assignee: null, project: null } },
  // German
  { text: 'Erinnere Maria daran, den Q3-Bericht bis Freitag zu schicken', language: 'de', expect: { title: 'Den Q3-Bericht zu schicken', assignee: 'Maria Rossi', dueDate: '2026-03-13' } },
  { text: 'Tom soll die Login-Seite reparieren', language: 'de', expect: { title: 'Die Login-Seite reparieren', assignee: 'Tom Becker' } },
  { text: 'Zuweisen an Aiko: Vertrag prüfen', language: 'de', expect: { title: 'Vertrag prüfen', assignee: 'Aiko Tanaka' } },
  { text: 'Mittagessen mit Hans morgen', language: 'de', expect: { title: 'Mittagessen', assignee: 'Hans Müller', dueDate: '2026-03-11' } },
  { text: 'Handbuch schreiben für die Field service app', language: 'de', expect: { title: 'Handbuch schreiben', project: 'FSA' } },
  { text: 'Absturz beheben im Projekt Mobile app', language: 'de', expect: { title: 'Absturz beheben', project: 'MOB' } },
  { text: 'Anna muss die Rechnung prüfen', language: 'de', expect: { title: 'Die Rechnung prüfen', assignee: null, alternatives: ['Anna Keller', 'Anna Schmidt'], warnings: ['AMBIGUOUS_USER'] } },
  { text: 'Maria anrufen', language: 'de', expect: { title: 'Maria anrufen', assignee: null } },
  // French
  { text: "Rappeler à Tom d'envoyer le rapport vendredi", language: 'fr', expect: { title: 'Envoyer le rapport', assignee: 'Tom Becker', dueDate: '2026-03-13' } },
  { text: 'Maria doit vérifier le contrat', language: 'fr', expect: { title: 'Vérifier le contrat', assignee: 'Maria Rossi' } },
  { text: 'Assigner à Aiko : corriger la page de connexion', language: 'fr', expect: { title: 'Corriger la page de connexion', assignee: 'Aiko Tanaka' } },
  { text: 'Déjeuner avec Hans demain', language: 'fr', expect: { title: 'Déjeuner', assignee: 'Hans Müller', dueDate: '2026-03-11' } },
  { text: 'Écrire le manuel pour le projet Field service app', language: 'fr', expect: { title: 'Écrire le manuel', project: 'FSA' } },
  { text: 'Corriger le bug dans Mobile app', language: 'fr', expect: { title: 'Corriger le bug', project: 'MOB' } },
  { text: 'Appeler Maria', language: 'fr', expect: { title: 'Appeler Maria', assignee: null } },
  // Spanish
  { text: 'Recordar a Maria que envíe el informe el viernes', language: 'es', expect: { title: 'Envíe el informe', assignee: 'Maria Rossi', dueDate: '2026-03-13' } },
  { text: 'Tom debe revisar el contrato', language: 'es', expect: { title: 'Revisar el contrato', assignee: 'Tom Becker' } },
  { text: 'Lucia tiene que preparar la demo', language: 'es', expect: { title: 'Preparar la demo', assignee: 'Lucía Fernández' } },
  { text: 'Asignar a Aiko: arreglar la página de inicio', language: 'es', expect: { title: 'Arreglar la página de inicio', assignee: 'Aiko Tanaka' } },
  { text: 'Almuerzo con Hans mañana', language: 'es', expect: { title: 'Almuerzo', assignee: 'Hans Müller', dueDate: '2026-03-11' } },
  { text: 'Escribir el manual para la Field service app', language: 'es', expect: { title: 'Escribir el manual', project: 'FSA' } },
  { text: 'Corregir el error en el proyecto Mobile app', language: 'es', expect: { title: 'Corregir el error', project: 'MOB' } },
  { text: 'Llamar a Maria', language: 'es', expect: { title: 'Llamar a Maria', assignee: null } },
];

t.ok(CASES.length >= 50, `${CASES.length} sentences`);
t.ok(NAMES.length >= 40, `${NAMES.length} sentences naming people and projects`);
t.same([...new Set(NAMES.map((c) => c.language ?? 'en'))], ['en', 'de', 'fr', 'es'], 'in every language the name grammar speaks');

function check(cases: Case[], { caller, people, projects }: typeof table) {
  const nameOf = new Map<string, string>(Object.values(people).map((p) => [p.id, p.name]));
  const keyOf = new Map<string, string>(Object.values(projects).map((p) => [p.id, p.key]));
  for (const c of cases) {
    t.test(c.text, async (t) => {
      const body = { text: c.text, now: c.now ?? NOW, timeZone: c.timeZone ?? ZONE, ...(c.language ? { language: c.language } : {}) };
      const res = expectStatus(await caller.api('POST', '/api/ai/assistant/parse', body, c.headers), 200, 'parse');
      const p = res.proposal;
      const e = c.expect;
      t.equal(res.source, 'offline');
      if (e.title !== undefined) t.equal(p.title, e.title, 'title');
      if (e.dueDate !== undefined) t.equal(p.dueDate, e.dueDate, 'due date');
      if (e.dueTime !== undefined) t.equal(p.dueTime, e.dueTime, 'due time');
      if (e.dueAt !== undefined) t.equal(p.dueAt, e.dueAt, 'due instant');
      t.equal(p.priority, e.priority ?? 'normal', 'priority');
      if (e.assignee !== undefined) t.equal(p.assigneeId === null ? null : nameOf.get(p.assigneeId), e.assignee, 'assignee');
      if (e.project !== undefined) t.equal(p.projectId === null ? null : keyOf.get(p.projectId), e.project, 'project');
      if (e.alternatives !== undefined) {
        const offered = [...res.alternatives.assignee.map((u: { name: string }) => u.name), ...res.alternatives.project.map((x: { key: string }) => x.key)].sort();
        t.same(offered, e.alternatives, 'alternatives');
      }
      t.same(res.warnings.map((w: { code: string }) => w.code).sort(), (e.warnings ?? []).sort(), 'warnings');
      // every span marks its own text
      for (const s of res.spans) t.equal(c.text.slice(s.start, s.end), s.text, `span ${s.kind}`);
    });
  }
}

check(CASES, table);
check(NAMES, named);
