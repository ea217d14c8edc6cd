import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attribute, readRegions, type Region } from '../bench/smaps.js';

const MiB = 1n << 20n;
const GiB = 1n << 30n;
const region = (start: bigint, size: bigint, perms: string, path: string, rssMiB: number): Region => ({
  start,
  end: start + size,
  perms,
  path,
  rssKiB: rssMiB * 1024,
});

test('bench smaps: resident memory is attributed by path, guard reservation, arena alignment and size', () => {
  const wasm = 0x7f00_0000_0000n;
  const arena = 0x7f10_0000_0000n; // a multiple of 64 MiB
  const regions = [
    region(0x400000n, 40n * MiB, 'r-xp', '/usr/bin/node', 30),
    region(0x3000000n, 20n * MiB, 'rw-p', '[heap]', 12),
    region(0x1234_5678_0000n, 4n * MiB, 'rw-p', '', 3), // a V8 heap page
    region(0x2234_5678_0000n, 2n * MiB, 'rwxp', '', 2), // V8 code
    region(wasm, 128n * MiB, 'rw-p', '', 33),
    region(wasm + 128n * MiB, 8n * GiB - 128n * MiB, '---p', '', 0),
    region(arena, 50n * MiB, 'rw-p', '', 40),
    region(arena + 50n * MiB, 14n * MiB, '---p', '', 0),
    region(arena + 100n * MiB + 4096n, 45n * MiB, 'rw-p', '', 45), // one large allocation, not at an arena boundary
    region(0x7f20_0000_0000n, 30n * MiB, 'r-xp', '/x/libonnxruntime.so.1', 20),
    region(0x7f30_0000_0000n, 1n * MiB, 'r-xp', '/usr/lib/libc.so.6', 1),
    region(0x7ffc_0000_0000n, 1n * MiB, 'rw-p', '[stack]', 1),
  ];
  assert.deepEqual(attribute(regions, '/usr/bin/node'), {
    'node executable': 30,
    'ONNX Runtime library': 20,
    'other libraries and files': 1,
    'WebAssembly memory (embedded database)': 33,
    'malloc arenas of threads (ONNX Runtime, V8 workers)': 40,
    'main malloc heap': 12,
    'large native allocations (model weights)': 45,
    'V8 code': 2,
    'other anonymous (V8 heaps, stacks)': 4,
  });
});

test("bench smaps: this process's regions are read with their resident sizes", () => {
  const regions = readRegions(process.pid);
  const total = regions.reduce((sum, r) => sum + r.rssKiB, 0);
  assert.ok(regions.some((r) => r.path === process.execPath && r.rssKiB > 0));
  assert.ok(total > 10 * 1024, `${total} KiB resident in all`);
});
