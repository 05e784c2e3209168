// Preload (`NODE_OPTIONS=--import <file URL of this file>`) that profiles the whole process with V8's sampling profiler
// and writes the profile to BENCH_CPU_PROFILE when the process exits: what `--cpu-prof` does, which NODE_OPTIONS refuses.
// Sample times are CLOCK_MONOTONIC µs, so a benchmark can pick the samples of one phase.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.BENCH_CPU_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.start');
  // a same-thread inspector session answers synchronously, so this works inside 'exit'
  process.once('exit', () => {
    session.post('Profiler.stop', (err, answer) => {
      if (!err) writeFileSync(file, JSON.stringify(answer.profile));
    });
  });
}
