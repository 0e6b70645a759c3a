// How fast a file's xxHash64 is taken for an ASC MHL history (src/storage/hash.ts), against what
// the same run can do without us: `cat file > /dev/null` (the reading alone, one process) and
// Bun's native one-shot xxHash64 (the whole file read into memory, then hashed in one call: the
// fastest hash there is here, but it needs the file's size in memory). A copy's verification
// reads every byte once, so the question is how much slower than reading hashing is.
//
// One file of BENCH_HASH_MIB MiB (512) on the disk's temporary folder and, where there is one, on
// /dev/shm; each round runs every contender once, in turn, BENCH_HASH_ROUNDS times (5), and the
// median of each is printed. The file stays in the page cache after it is written (nothing here
// drops caches: that would slow the whole machine), so the disk case shows the cost of the calls
// and the hashing, not the disk. Then the hashing alone on a buffer already in memory, and
// hashFile with other chunk sizes, to show why HASH_CHUNK is what it is.
//
// Prints the figures; writes no document. Run: bun bench/hash.ts
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HASH_CHUNK, createXxh64, hashFile, xxh64 } from '../src/storage/hash.ts'
import { writeLarge } from '../test/helpers/tree.ts'
import { machine } from './doc.ts'

const MiB = 1 << 20
const SIZE = Number(process.env.BENCH_HASH_MIB ?? 512) * MiB
const ROUNDS = Number(process.env.BENCH_HASH_ROUNDS ?? 5)

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const mibps = (bytes: number, ms: number) => bytes / MiB / (ms / 1000)

async function time(work: () => unknown): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

type Contender = { name: string; run: () => unknown }

/** Each contender once per round, in turn; the median time of each. */
async function rounds(contenders: Contender[]): Promise<Map<string, number>> {
  const times = new Map(contenders.map((c) => [c.name, [] as number[]]))
  for (const c of contenders) await c.run() // warm up: the page cache, the JIT
  for (let r = 0; r < ROUNDS; r++) for (const c of contenders) times.get(c.name)!.push(await time(c.run))
  return new Map([...times].map(([name, ms]) => [name, median(ms)]))
}

function table(title: string, bytes: number, results: Map<string, number>, baseline: string) {
  console.log(`\n${title}`)
  const base = results.get(baseline)!
  for (const [name, ms] of results)
    console.log(
      `  ${name.padEnd(44)} ${mibps(bytes, ms).toFixed(0).padStart(7)} MiB/s  ${ms.toFixed(0).padStart(6)} ms  ${(base / ms).toFixed(2)}× ${baseline}`,
    )
}

async function fileCase(where: string, dir: string) {
  const path = join(dir, 'clip.mxf')
  writeLarge(path, SIZE)
  const expected = xxh64(readFileSync(path))
  const check = (got: string) => {
    if (got !== expected) throw new Error(`hash differs: ${got} ≠ ${expected}`)
  }
  const results = await rounds([
    { name: 'cat file > /dev/null', run: () => spawnSync('sh', ['-c', 'cat "$1" > /dev/null', 'sh', path]) },
    {
      name: `hashFile (xxhash-wasm, ${HASH_CHUNK / MiB} MiB chunks)`,
      run: async () => check((await hashFile(path)).xxh64),
    },
    { name: 'read whole + Bun.hash.xxHash64 one-shot', run: async () => check(xxh64(await Bun.file(path).bytes())) },
  ])
  table(`${SIZE / MiB} MiB file, ${where} (${dir}), page cache warm`, SIZE, results, 'cat file > /dev/null')
  const sizes = await rounds(
    [256 << 10, 1 << 20, 4 << 20, 16 << 20].map((chunk) => ({
      name: `hashFile, ${chunk >= MiB ? `${chunk / MiB} MiB` : `${chunk >> 10} KiB`} chunks`,
      run: async () => check((await hashFile(path, { chunk })).xxh64),
    })),
  )
  table(`hashFile by chunk size, ${where}`, SIZE, sizes, `hashFile, ${HASH_CHUNK / MiB} MiB chunks`)
}

async function main() {
  console.log(machine())
  const dirs: [string, string][] = [['disk', mkdtempSync(join(tmpdir(), 'reelhouse-bench-hash-'))]]
  if (existsSync('/dev/shm')) dirs.push(['tmpfs', mkdtempSync(join('/dev/shm', 'reelhouse-bench-hash-'))])
  try {
    for (const [where, dir] of dirs) await fileCase(where, dir)
    // The hashing alone, the bytes already in memory.
    const bytes = new Uint8Array(SIZE).map((_, i) => (i * 2654435761) >>> 24)
    const expected = xxh64(bytes)
    const results = await rounds([
      { name: 'Bun.hash.xxHash64 one-shot', run: () => xxh64(bytes) },
      {
        name: 'createXxh64, 1 MiB updates',
        run: () => {
          const h = createXxh64()
          for (let at = 0; at < SIZE; at += MiB) h.update(bytes.subarray(at, at + MiB))
          if (h.digest() !== expected) throw new Error('hash differs')
        },
      },
    ])
    table(`${SIZE / MiB} MiB in memory, hashing only`, SIZE, results, 'Bun.hash.xxHash64 one-shot')
  } finally {
    for (const [, dir] of dirs) rmSync(dir, { recursive: true, force: true })
  }
}

await main()
