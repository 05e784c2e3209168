// CPU time of this process or of a child, in µs, to show where a benchmark's two cores went. Children are read from
// /proc (Linux: utime + stime in clock ticks of 1/100 s); elsewhere their figure is undefined.
import { readFileSync } from 'node:fs';

const TICK_US = 10_000;

export function cpuMicros(pid?: number): number | undefined {
  if (pid === undefined) {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}
