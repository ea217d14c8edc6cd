/** Command-line options of the load and scale benches: `--name value` pairs, and `--env KEY=VALUE` (repeatable). */
export interface BenchOptions {
  values: Map<string, string>;
  /** Engine settings passed through to the engine process (and the in-process fill). */
  env: Record<string, string>;
}

export function parseBenchOptions(argv: readonly string[], known: readonly string[], usage: string): BenchOptions {
  const values = new Map<string, string>();
  const env: Record<string, string> = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i]!.replace(/^--/, '');
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`--${name} needs a value; ${usage}`);
    if (name === 'env') {
      const eq = value.indexOf('=');
      if (eq <= 0) throw new Error(`--env ${value}: write it as KEY=VALUE; ${usage}`);
      env[value.slice(0, eq)] = value.slice(eq + 1);
    } else if (known.includes(name)) values.set(name, value);
    else throw new Error(`unknown option --${name}; ${usage}`);
  }
  return { values, env };
}

/**
 * A bench's options, each with the words its usage line gives it (`{sizes: 'N1,N2 (10000,100000)'}`), in the order
 * the usage line lists them: one table, so the options a bench accepts and the ones its usage names cannot differ.
 */
export type OptionHelp = Readonly<Record<string, string>>;

/** parseBenchOptions with the known names and the usage line (`options: --name words ...`) both read from `help`. */
export function parseBenchCommandLine(argv: readonly string[], help: OptionHelp): BenchOptions & { usage: string } {
  const usage = `options: ${Object.entries(help)
    .map(([name, words]) => `--${name} ${words}`)
    .join(' ')}`;
  return { ...parseBenchOptions(argv, Object.keys(help), usage), usage };
}

/** A number option of at least `min` (default: above 0), or its default; anything else is refused with its name. */
export function numberOption(options: BenchOptions, name: string, fallback: number, min?: number): number {
  const raw = options.values.get(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  const ok = Number.isFinite(n) && (min === undefined ? n > 0 : n >= min);
  if (!ok)
    throw new Error(`--${name} ${raw}: must be a number ${min === undefined ? 'above 0' : `of at least ${min}`}`);
  return n;
}

/** A yes/no option (`--rum yes`), or its default; any other word is refused with its name. */
export function yesNoOption(options: BenchOptions, name: string, fallback: boolean): boolean {
  const raw = options.values.get(name);
  if (raw === undefined) return fallback;
  if (raw !== 'yes' && raw !== 'no') throw new Error(`--${name} ${raw}: must be yes or no`);
  return raw === 'yes';
}

/** A comma-separated list of positive numbers (`--sizes 10000,100000`). */
export function listOption(options: BenchOptions, name: string, fallback: readonly number[]): number[] {
  const raw = options.values.get(name);
  if (raw === undefined) return [...fallback];
  const list = raw.split(',').map((s) => Number(s.trim()));
  if (list.length === 0 || list.some((n) => !Number.isFinite(n) || n <= 0)) {
    throw new Error(`--${name} ${raw}: must be numbers above 0 separated by commas`);
  }
  return list;
}

/**
 * The engine settings as the JSON output records them: secrets (keys, tokens, passwords) are masked, and a
 * connection URL keeps its host and database but not its password.
 */
export function recordedSettings(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (/(^|_)(KEY|TOKEN|SECRET|PASSWORD)(_|$)/.test(key)) out[key] = '***';
    else if (URL.canParse(value) && new URL(value).password !== '') {
      const url = new URL(value);
      url.password = '***';
      out[key] = url.toString();
    } else out[key] = value;
  }
  return out;
}
