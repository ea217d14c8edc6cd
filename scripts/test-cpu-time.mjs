// Loaded into each test file's process by run-tests.mjs: when the file's process exits, it writes the CPU time it used
// together with the CPU time of every child process it waited for (engines, CLI runs, npm, Python, chromium), as
// "user system" seconds, to the file named by MNEMOS_TEST_CPU_FILE. The figure is Linux's (/proc/self/stat); elsewhere
// nothing is written and the runner prints wall time alone.
import { readFileSync, writeFileSync } from 'node:fs';

const target = process.env.MNEMOS_TEST_CPU_FILE;
// Children of the test file inherit the environment; only the test file's own process reports.
delete process.env.MNEMOS_TEST_CPU_FILE;
// Clock ticks per second: 100 on every Linux this suite runs on (sysconf(_SC_CLK_TCK) is not reachable from Node).
const TICKS = 100;

if (target && process.platform === 'linux') {
  process.on('exit', () => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      // Fields after the command name (which may hold spaces) start at the state, field 3; utime is field 14.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const [utime, stime, cutime, cstime] = fields.slice(11, 15).map(Number);
      writeFileSync(target, `${(utime + cutime) / TICKS} ${(stime + cstime) / TICKS}\n`);
    } catch {
      // No figure is better than a failed test file.
    }
  });
}
