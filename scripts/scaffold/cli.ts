// `npm run scaffold`: arguments → spec → generated files → written (or, with
// --dry-run, printed). Returns the exit code: 0 done, 2 bad input, 3 the module
// or a file exists; nothing is written unless everything checked out.
import { HELP, parseArgs } from './args.ts';
import { EXIT_CODES, ScaffoldError, formatProblem } from './errors.ts';
import { display } from './files.ts';
import { generate } from './generate.ts';
import { resolvePaths } from './project.ts';
import { buildSpec } from './spec.ts';

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

const consoleIo: Io = { out: (l) => console.log(l), err: (l) => console.error(l) };

export async function run(argv: string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const { args, problems } = parseArgs(argv);
    if (args.help) {
      io.out(HELP);
      return 0;
    }
    if (!argv.length) {
      io.err(HELP);
      return EXIT_CODES.SCAFFOLD_BAD_INPUT;
    }
    problems.throwIfAny();
    const { spec, problems: specProblems } = await buildSpec(args);
    const paths = resolvePaths(args, env);
    const { files, notes } = await generate(spec, { paths, addEntity: args.addEntity, problems: specProblems });
    const list = files.listFiles();
    if (args.dryRun) {
      io.out(`Dry run: would write ${list.length} files (nothing written)`);
      for (const f of list) io.out(`  ${f.action} ${display(f.path, paths.root)}`);
      for (const f of list) io.out(`\n--- ${display(f.path, paths.root)}\n${f.contents.replace(/\n$/, '')}`);
      for (const n of notes) io.out(`note: ${n}`);
      return 0;
    }
    await files.writeFiles(paths.root);
    io.out(`${args.addEntity ? 'Added to' : 'Scaffolded'} module "${spec.module}":`);
    for (const f of list) io.out(`  ${f.action === 'create' ? 'created' : 'updated'} ${display(f.path, paths.root)}`);
    for (const n of notes) io.out(`note: ${n}`);
    const tests = list.filter((f) => f.path.endsWith('.test.ts')).map((f) => display(f.path, paths.root));
    io.out(`\nNext: restart the server (npm start) to load it and migrate every tenant; run its tests with\n  npm test -- ${tests.join(' ')}`);
    return 0;
  } catch (err) {
    if (!(err instanceof ScaffoldError)) throw err;
    io.err(`scaffold: nothing written: ${err.problems.length === 1 ? '' : `${err.problems.length} problems:\n  `}${err.problems.map(formatProblem).join('\n  ')}`);
    if (err.code === 'SCAFFOLD_BAD_INPUT') io.err('Usage and field syntax: npm run scaffold -- --help');
    return EXIT_CODES[err.code];
  }
}
