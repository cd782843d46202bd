// Run as a process of its own (test/faults/rebuild-resume.spec.ts): the service, started as
// src/main.ts starts it, with one probe added. After every batch its read model commits, a line
// on stderr, `probe: applied through <position>`, names the log position the tables now include.
// While it catches up at start the service does not listen yet, and its progress lines count
// events applied, not the position reached: nothing else it shows says how far in the log it is,
// and the spec must kill it part way through, whatever the machine's speed. The probe only listens (`onApplied`): the runner works as ever.
// Not to be imported by a spec: importing it starts the service.
import { ProjectionRunner } from '../../src/projection/runner';

const start = ProjectionRunner.prototype.start;
ProjectionRunner.prototype.start = function (this: ProjectionRunner, ...args: Parameters<typeof start>) {
  this.onApplied(() => process.stderr.write(`probe: applied through ${this.position}\n`));
  return start.apply(this, args);
};

// After the probe is in place (a static import would run main first).
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../src/main');
