// Schema-driven fuzz of every operation, shard 2 of 4 (test/support/fuzz/shard.ts
// says which operations; FUZZ_SEED and FUZZ_RUNS override the defaults).
import t from 'tap';
import { runShard } from '../support/fuzz/shard.ts';

t.test('fuzz shard 2 of 4', (t) => runShard(t, 2, 4));
