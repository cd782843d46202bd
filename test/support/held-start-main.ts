// Run as a process of its own (test/hardening/starting.spec.ts): the service, started as
// src/main.ts starts it, its read model's catch-up held until the process gets SIGUSR2. A start
// that catches up with a long log lasts as long as the log and the machine make it; held, the spec
// can ask the port what it answers meanwhile, whatever the machine's speed.
// Not to be imported by a spec: importing it starts the service.
import { ProjectionRunner } from '../../src/projection/runner';

const startServing = ProjectionRunner.prototype.startServing;
ProjectionRunner.prototype.startServing = async function (this: ProjectionRunner) {
  process.stderr.write('probe: catch-up held\n');
  await new Promise((resolve) => process.once('SIGUSR2', resolve));
  return startServing.apply(this);
};

// After the probe is in place (a static import would run main first).
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../src/main');
