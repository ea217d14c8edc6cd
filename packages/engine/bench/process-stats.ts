import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second in /proc/<pid>/stat (USER_HZ: 100 on Linux). */
export const TICKS_PER_SECOND = 100;

/** User plus system CPU ticks of a process, all its threads, or undefined when it cannot be read (it has ended). */
export function cpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces), from field 3: utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Resident memory of a process in MiB: now (VmRSS), or the peak since it started (VmHWM). */
export function rssMiB(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/** CPU seconds each thread of a process has used so far, by thread id (threads that ended are not counted). */
export function perThreadCpuSeconds(pid: number | undefined): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // utime and stime are fields 14 and 15; the command name before them is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
  }
  return out;
}

/** CPU seconds a process has used so far: its main thread, and all its other threads (the model's and the database's). */
export function threadCpuSeconds(pid: number | undefined): { main: number; others: number } {
  const out = { main: 0, others: 0 };
  for (const [tid, seconds] of perThreadCpuSeconds(pid)) {
    if (tid === pid) out.main += seconds;
    else out.others += seconds;
  }
  return out;
}

/**
 * CPU milliseconds per request of each thread between two perThreadCpuSeconds readings: the main thread first, then the others
 * from the busiest down (threads under 0.05 ms per request left out). Worker threads have no names of their own.
 */
export function cpuPerRequestByThread(
  pid: number | undefined,
  before: ReadonlyMap<number, number>,
  after: ReadonlyMap<number, number>,
  requests: number,
): { main: number; others: number[] } {
  const perRequest = (tid: number) => (1000 * ((after.get(tid) ?? 0) - (before.get(tid) ?? 0))) / Math.max(1, requests);
  const others = [...after.keys()]
    .filter((tid) => tid !== pid)
    .map(perRequest)
    .filter((ms) => ms >= 0.05)
    .sort((a, b) => b - a);
  return { main: perRequest(pid ?? 0), others };
}

/** The machine's idle and total CPU time so far, in clock ticks (first line of /proc/stat). */
export function machineTicks(): { idle: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: ticks[3]! + ticks[4]!, total: ticks.reduce((a, b) => a + b, 0) };
}
