// CPU time of this process or of a child, in µs, to show where a benchmark's two cores went. Children are read from
// /proc (Linux: utime + stime, in USER_HZ ticks: 1/100 s on x86 and ARM); elsewhere their figure is undefined.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 10_000;

export function cpuMicros(pid?: number): number | undefined {
  if (pid === undefined) {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after the command name, which is in parentheses and may itself hold ') '
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

/** CPU µs of every PostgreSQL process running now (the server's backends live as long as the daemons' connections) */
export function postgresCpuMicros(): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') total += cpuMicros(Number(pid)) ?? 0;
    } catch {
      // ended meanwhile
    }
  }
  return total;
}
