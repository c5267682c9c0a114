// the test worker for the files that mostly wait (see ../support/worker/queue.ts), beside the other two
import { runWorker } from '../support/worker/run.ts';

await runWorker({ waiting: true });
