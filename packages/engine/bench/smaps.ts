import { readFileSync, readlinkSync } from 'node:fs';

/** One mapping of a process's address space, from /proc/PID/smaps. */
export interface Region {
  start: bigint;
  end: bigint;
  perms: string;
  /** The mapped file, a pseudo-name such as `[heap]`, or '' for anonymous memory. */
  path: string;
  rssKiB: number;
}

/** The parts a process's resident memory is attributed to, in the order they are printed. */
export const PARTS = [
  'node executable',
  'ONNX Runtime library',
  'other libraries and files',
  'WebAssembly memory (embedded database)',
  'malloc arenas of threads (ONNX Runtime, V8 workers)',
  'main malloc heap',
  'large native allocations (model weights)',
  'V8 code',
  'other anonymous (V8 heaps, stacks)',
] as const;

export type Part = (typeof PARTS)[number];

const GiB = 1n << 30n;
/** glibc's per-thread arenas are mapped at multiples of their maximum size (HEAP_MAX_SIZE, 64 MiB on 64-bit). */
const ARENA_ALIGNMENT = 64n << 20n;
/** Allocations this large are mapped on their own (above glibc's largest mmap threshold, 32 MiB). */
const LARGE_ALLOCATION = 32n << 20n;

export function readRegions(pid: number): Region[] {
  const regions: Region[] = [];
  let current: Region | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      current = {
        start: BigInt(`0x${header[1]!}`),
        end: BigInt(`0x${header[2]!}`),
        perms: header[3]!,
        path: header[4]!.trim(),
        rssKiB: 0,
      };
      regions.push(current);
    } else if (current && line.startsWith('Rss:')) {
      current.rssKiB = Number(/(\d+)/.exec(line)?.[1] ?? 0);
    }
  }
  return regions;
}

/**
 * Resident MiB by part. WebAssembly memory is the readable part of a reservation followed by a guard region of
 * gigabytes that V8 maps without access; thread arenas sit at 64 MiB boundaries; the rest is told apart by its path.
 */
export function attribute(regions: readonly Region[], executable: string): Record<Part, number> {
  const kib = Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>;
  regions.forEach((r, i) => {
    kib[partOf(r, regions[i + 1], executable)] += r.rssKiB;
  });
  return Object.fromEntries(PARTS.map((p) => [p, kib[p] / 1024])) as Record<Part, number>;
}

function partOf(r: Region, next: Region | undefined, executable: string): Part {
  if (r.path === executable) return 'node executable';
  if (r.path.includes('libonnxruntime')) return 'ONNX Runtime library';
  if (r.path === '[heap]') return 'main malloc heap';
  if (r.path !== '' && !r.path.startsWith('[')) return 'other libraries and files';
  if (r.path !== '') return 'other anonymous (V8 heaps, stacks)';
  const guarded =
    next?.start === r.end && next.perms === '---p' && next.path === '' && next.end - next.start >= 4n * GiB;
  if (r.perms.startsWith('rw') && guarded) return 'WebAssembly memory (embedded database)';
  if (r.perms.includes('x')) return 'V8 code';
  if (r.start % ARENA_ALIGNMENT === 0n) return 'malloc arenas of threads (ONNX Runtime, V8 workers)';
  if (r.end - r.start >= LARGE_ALLOCATION) return 'large native allocations (model weights)';
  return 'other anonymous (V8 heaps, stacks)';
}

/** The process's resident memory by part, and its total (VmRSS) and peak (VmHWM), in MiB. */
export function residentByPart(pid: number): { rss: number; peak: number; parts: Record<Part, number> } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return {
    rss: field('VmRSS'),
    peak: field('VmHWM'),
    parts: attribute(readRegions(pid), readlinkSync(`/proc/${pid}/exe`)),
  };
}
