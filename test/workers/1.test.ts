// one of the test workers `npm test` runs (see ../support/worker/run.ts)
import { runWorker } from '../support/worker/run.ts';

await runWorker();
