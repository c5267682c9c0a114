// one of the test workers `npm test` runs (see ../support/worker/run.ts)
import '../support/worker/run.ts';
