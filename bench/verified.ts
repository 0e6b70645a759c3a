// The verified-copy benchmark: every copy Reelhouse checks by hash (src/storage/verified.ts)
// against the same work done by hand in the same run, on the same disk: `cp` of the bytes, then
// `xxhsum` (the xxHash64 an ASC MHL history records) of every file of the copy. Goal: Reelhouse
// at >= 0.8 of that baseline's speed, i.e. its time at most 1.25 times the baseline's.
//
// Cases, each on the disk's temporary folder (BENCH_VERIFIED_DIR to choose another; tmpfs would
// leave out the disk's part of the work):
// - a project copy of 10,000 files of 16 KiB, through the API as users see it: POST
//   /api/projectassets/ with copy_of, timed until the task is done and the project ASSET_DONE;
//   against `cp -r SRC DST && find DST -type f -print0 | xargs -0 xxhsum > /dev/null`;
// - a project copy of one file of 1 GiB, through the API (a large file: fs.ts copyLarge, the
//   verified copy without an fsync), against `cp -r` and xxhsum as above;
// - one file of 1 GiB copied durably by the storage layer's verified copy (storage/archive.ts
//   copyVerifiedTo with `durable`: what an archive with purge does, and a move across file
//   systems the same way: copy hashed, fsync, read back, checked, named without replacing, the
//   folder synced), against `cp FILE DIR/ && xxhsum DIR/FILE`;
// - the archive of a 1 GiB asset to an archive device (POST /api/archiveactivities/, without
//   purge: the file stays online) and its restore into the production (POST
//   /api/restoreactivities/ with a new path), each timed until the task is done, against cp +
//   xxhsum of the same file between the same folders. Neither waits for the disk (their source
//   stays: storage/archive.ts says why).
// The last three also run the baseline with an fsync of the copy before its hash
// (`cp && sync FILE && xxhsum`): for the durable copy that is the same work by hand, and its goal
// is against it; for the archive and the restore it is for information.
//
// Each round runs every side once, each into a fresh target after a `sync` (and, in the 1 GiB
// cases, an untimed scratch write: settle() says why), the side that goes first turning from
// round to round; the verdict is the median of the per-round ratios (the disk is shared, and
// other work's write-back makes rounds vary).
//
// Knobs: BENCH_VERIFIED_ROUNDS (5), BENCH_VERIFIED_FILES (10000), BENCH_VERIFIED_MIB (1024),
// BENCH_VERIFIED_SETTLE_MIB (the size: 0 for none), BENCH_VERIFIED_ONLY (cases whose name holds
// this text; a partial run writes no section), BENCH_NO_DOC=1 (no section). Needs xxhsum
// (Debian/Ubuntu: apt-get install xxhash). Run: flock /tmp/bench.lock bun bench/verified.ts
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statfsSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { copyVerifiedTo } from '../src/storage/archive.ts'
import { seedProduction, testApp } from '../test/helpers/app.ts'
import { manyFiles, writeLarge } from '../test/helpers/tree.ts'
import { machine, median, writeSection } from './doc.ts'

const ROUNDS = Number(process.env.BENCH_VERIFIED_ROUNDS ?? 5)
const FILES = Number(process.env.BENCH_VERIFIED_FILES ?? 10_000)
const SMALL = 16 * 1024
const MIB = Number(process.env.BENCH_VERIFIED_MIB ?? 1024)
const BIG = MIB * 2 ** 20
const GOAL = 0.8
const ONLY = process.env.BENCH_VERIFIED_ONLY
const DIR = process.env.BENCH_VERIFIED_DIR ?? tmpdir()
const SETTLE_MIB = Number(process.env.BENCH_VERIFIED_SETTLE_MIB ?? MIB)

const sizeName = MIB % 1024 === 0 ? `${MIB / 1024} GiB` : `${MIB} MiB`
const NAMES = {
  project: `project copy, ${FILES.toLocaleString('en')} files of ${SMALL / 1024} KiB`,
  bundle: `project copy, one ${sizeName} file`,
  file: `durable verified copy of one ${sizeName} file`,
  archive: `archive of a ${sizeName} asset`,
  restore: `restore of a ${sizeName} asset`,
}
type Case = keyof typeof NAMES
const wanted = (c: Case) => !ONLY || NAMES[c].includes(ONLY)

type Result = {
  name: string
  bytes: number
  files: number
  base: number[]
  ours: number[]
  /** cp, then an fsync of the copy, then xxhsum: the baseline with the durability of ours. */
  synced: number[]
  /** The copy waits for the disk: the same work by hand is then cp + fsync + xxhsum, and the goal is against that. */
  durable?: boolean
}

/** The same work by hand: the copy, then the hash of the copy. */
const BY_HAND = 'cp "$1" "$2" && xxhsum "$2" > /dev/null'
/** The same, with the copy synced to the disk before it is hashed, as ours are (`sync FILE`: fsync). */
const BY_HAND_SYNCED = 'cp "$1" "$2" && sync "$2" && xxhsum "$2" > /dev/null'

/** Runs a shell line; throws with its stderr when it fails. */
function sh(line: string, ...args: string[]) {
  const r = spawnSync('sh', ['-c', line, 'sh', ...args])
  if (r.status !== 0) throw new Error(`${line} failed: ${r.stderr}`)
}
const seconds = (start: number) => (performance.now() - start) / 1000

/** Where the untimed scratch write goes (settle), set once the folders are made. */
let scratch: string | undefined

type Sides = { base: () => unknown; ours: () => unknown; synced?: () => unknown }

/**
 * Round `n` of a case: every side once, each after a sync (and a settle), in an order that turns
 * from round to round (base first, then ours first, then synced first); seconds of each.
 */
async function round(n: number, sides: Sides) {
  const names = (Object.keys(sides) as (keyof Sides)[]).filter((k) => sides[k])
  const order = names.map((_, i) => names[(i + n) % names.length]!)
  const times: Partial<Record<keyof Sides, number>> = {}
  for (const name of order) {
    if (scratch) settle(scratch)
    spawnSync('sync')
    const start = performance.now()
    await sides[name]!()
    times[name] = seconds(start)
  }
  return times as Record<keyof Sides, number>
}

/**
 * Before each timed side of the 1 GiB cases: SETTLE_MIB written to a scratch file with dd, synced
 * and removed, untimed. On the machines these figures come from (a VM, 2 cores), the first
 * buffered write of a GiB that follows a GiB written and synced is at times several times slower
 * in the kernel (all of it in copying into the page cache), whoever makes it: dd as much as a
 * copy of ours or cp. The scratch write takes that hit instead of whichever side comes first.
 */
function settle(file: string) {
  sh(`dd if=/dev/zero of="$1" bs=1M count=${SETTLE_MIB} 2> /dev/null && sync && rm "$1"`, file)
}

async function main() {
  if (spawnSync('xxhsum', ['--version']).status !== 0)
    throw new Error('xxhsum is not installed (Debian/Ubuntu: apt-get install xxhash); it is the baseline')
  mkdirSync(DIR, { recursive: true })
  // Room: the source, its copy by each side, the archive and the restore (1 GiB each), and the
  // small files twice a round and the source, with a margin.
  const { bavail, bsize } = statfsSync(DIR)
  const need = 6 * BIG + (2 * ROUNDS + 2) * FILES * SMALL * 2
  if (bavail * bsize < need)
    throw new Error(
      `${DIR} has ${((bavail * bsize) / 2 ** 30).toFixed(1)} GiB free; this needs ${(need / 2 ** 30).toFixed(1)}`,
    )
  const host = machine()
  const fsType =
    spawnSync('df', ['-T', DIR]).stdout?.toString().split('\n')[1]?.split(/\s+/)[1] ?? 'unknown file system'
  const t = testApp(undefined, { tasks: true })
  // Owned by the app from the start: t.stop() removes them whatever fails after.
  const root = mkdtempSync(join(DIR, 'reelhouse-bench-verified-'))
  const vault = mkdtempSync(join(DIR, 'reelhouse-bench-vault-'))
  t.owned.push(root, vault)
  let production: { id: number }
  try {
    production = (await seedProduction(t, 'Bench', root)).production
    const device = await t.post('/api/devices/', { name: 'vault', path: vault, is_archive: true })
    if (device.status !== 201) throw new Error(`archive device: ${device.text}`)
  } catch (error) {
    await t.stop()
    rmSync(t.dataDir, { recursive: true, force: true })
    throw error
  }
  const show = join(root, 'Bench')
  mkdirSync(show, { recursive: true })
  const results: Result[] = []
  const report = (r: Result) => {
    results.push(r)
    const s = summary(r)
    const synced = r.synced.length
      ? `, cp + fsync + xxhsum ${median(r.synced).toFixed(3)} s (ratio ${s.syncedRatio.toFixed(2)})`
      : ''
    console.log(
      `${r.name}: cp + xxhsum ${median(r.base).toFixed(3)} s, Reelhouse ${median(r.ours).toFixed(3)} s, ratio ${s.ratio.toFixed(2)}${synced}; goal >= ${GOAL} of ${s.against}: ${s.pass ? 'pass' : 'FAIL'}`,
    )
    console.log(
      `  rounds: cp + xxhsum ${fmt(r.base)}; Reelhouse ${fmt(r.ours)}${r.synced.length ? `; cp + fsync + xxhsum ${fmt(r.synced)}` : ''}`,
    )
  }
  try {
    if (wanted('project')) {
      const source = join(show, 'source')
      manyFiles(source, FILES, SMALL, 100)
      const project = await t.post('/api/projectassets/', {
        name: 'source',
        bundle_root: source,
        production_id: production.id,
      })
      if (project.status !== 201) throw new Error(`project: ${project.text}`)
      await t.runner.idle()
      const r: Result = { name: NAMES.project, bytes: FILES * SMALL, files: FILES, base: [], ours: [], synced: [] }
      for (let n = 0; n < ROUNDS; n++) {
        const by = join(show, `by-hand-${n}`)
        let copyId = 0
        const times = await round(n, {
          base: () => sh('cp -r "$1" "$2" && find "$2" -type f -print0 | xargs -0 xxhsum > /dev/null', source, by),
          ours: async () => {
            const copy = await t.post('/api/projectassets/', {
              name: `copy ${n}`,
              bundle_root: join(show, `copy-${n}`),
              production_id: production.id,
              copy_of: project.json.id,
            })
            if (copy.status !== 201) throw new Error(`copy: ${copy.text}`)
            copyId = copy.json.id
            await t.runner.idle()
          },
        })
        const done = await t.get(`/api/projectassets/${copyId}/`)
        if (done.json.status_asset !== 6) throw new Error(`copy failed: ${done.json.status_asset_description}`)
        r.base.push(times.base)
        r.ours.push(times.ours)
      }
      // Removed only now: on ext4 a file made within a minute or so of many removals waits for
      // the kernel to look for an inode not recently freed (fs/ext4/ialloc.c, recently_deleted),
      // which made rounds after a removal of 20,000 files up to ten times slower, whichever side.
      for (let n = 0; n < ROUNDS; n++)
        for (const done of [join(show, `by-hand-${n}`), join(show, `copy-${n}`)])
          rmSync(done, { recursive: true, force: true })
      rmSync(source, { recursive: true, force: true })
      report(r)
    }

    const big = join(show, 'big.mxf')
    if (wanted('file') || wanted('archive') || wanted('restore')) writeLarge(big, BIG)
    if (SETTLE_MIB > 0) scratch = join(root, 'settle.bin')

    if (wanted('bundle')) {
      // A project holding one large file: its copy goes through the verified copy without an
      // fsync (fs.ts copyLarge: copied, size checked, read back), as cp + xxhsum.
      const bundle = join(show, 'bundle')
      mkdirSync(bundle)
      writeLarge(join(bundle, 'big.mxf'), BIG)
      const project = await t.post('/api/projectassets/', {
        name: 'bundle',
        bundle_root: bundle,
        production_id: production.id,
      })
      if (project.status !== 201) throw new Error(`project: ${project.text}`)
      await t.runner.idle()
      const r: Result = { name: NAMES.bundle, bytes: BIG, files: 1, base: [], ours: [], synced: [] }
      for (let n = 0; n < ROUNDS; n++) {
        const by = join(show, `bundle-by-hand-${n}`)
        const copy = join(show, `bundle-copy-${n}`)
        let copyId = 0
        const times = await round(n, {
          base: () => sh('cp -r "$1" "$2" && find "$2" -type f -print0 | xargs -0 xxhsum > /dev/null', bundle, by),
          ours: async () => {
            const made = await t.post('/api/projectassets/', {
              name: `bundle copy ${n}`,
              bundle_root: copy,
              production_id: production.id,
              copy_of: project.json.id,
            })
            if (made.status !== 201) throw new Error(`copy: ${made.text}`)
            copyId = made.json.id
            await t.runner.idle()
          },
        })
        const done = await t.get(`/api/projectassets/${copyId}/`)
        if (done.json.status_asset !== 6) throw new Error(`copy failed: ${done.json.status_asset_description}`)
        r.base.push(times.base)
        r.ours.push(times.ours)
        for (const made of [by, copy]) rmSync(made, { recursive: true, force: true })
      }
      rmSync(bundle, { recursive: true, force: true })
      report(r)
    }

    if (wanted('file')) {
      const r: Result = { name: NAMES.file, bytes: BIG, files: 1, base: [], ours: [], synced: [], durable: true }
      const into = join(vault, 'copies')
      mkdirSync(into)
      for (let n = 0; n < ROUNDS; n++) {
        const by = join(into, `by-hand-${n}.mxf`)
        const ours = join(into, `verified-${n}.mxf`)
        const synced = join(into, `synced-${n}.mxf`)
        const times = await round(n, {
          base: () => sh(BY_HAND, big, by),
          ours: async () => {
            const fd = openSync(big, constants.O_RDONLY | constants.O_NOFOLLOW)
            try {
              const copied = await copyVerifiedTo(fd, vault, ours, { durable: true })
              if (copied.size !== BIG) throw new Error(`copied ${copied.size} bytes`)
            } finally {
              closeSync(fd)
            }
          },
          synced: () => sh(BY_HAND_SYNCED, big, synced),
        })
        r.base.push(times.base)
        r.ours.push(times.ours)
        r.synced.push(times.synced)
        for (const file of [by, ours, synced]) unlinkSync(file)
      }
      report(r)
    }

    if (wanted('archive') || wanted('restore')) {
      const asset = await t.post('/api/videoassets/', { name: 'big.mxf', path_file: big, production_name: 'Bench' })
      if (asset.status !== 201) throw new Error(`asset: ${asset.text}`)
      await t.runner.idle() // whatever registering it queued (a probe) is not timed
      const types = (await t.get('/api/contenttypes/')).json as { id: number; name: string }[]
      const contentType = types.find((c) => c.name === 'videoasset')!.id
      const byHand = join(vault, 'by-hand')
      mkdirSync(byHand)
      const task = async (r: { status: number; json: any; text: string }) => {
        if (r.status !== 202) throw new Error(r.text)
        await t.runner.idle()
        const done = (await t.get(`/api/tasks/${r.json.tasks[0].id}/`)).json
        if (done.state !== 'done') throw new Error(`task ${done.kind}: ${done.state} ${done.error}`)
        return done
      }
      const archive: Result = { name: NAMES.archive, bytes: BIG, files: 1, base: [], ours: [], synced: [] }
      const restore: Result = { name: NAMES.restore, bytes: BIG, files: 1, base: [], ours: [], synced: [] }
      let online = big
      for (let n = 0; n < ROUNDS; n++) {
        // Archive the file online now; restore it under a new name, which the asset then points at.
        let handle = ''
        const a = await round(n, {
          base: () => sh(BY_HAND, online, join(byHand, 'archive.mxf')),
          ours: async () => {
            const done = await task(
              await t.post('/api/archiveactivities/', [
                {
                  content_type_id: contentType,
                  asset_id: asset.json.id,
                  archive_type: 'archive_std',
                  archive_connector: 'vault',
                },
              ]),
            )
            handle = done.result.archive_handle
          },
          synced: () => sh(BY_HAND_SYNCED, online, join(byHand, 'archive-synced.mxf')),
        })
        archive.base.push(a.base)
        archive.ours.push(a.ours)
        archive.synced.push(a.synced)
        const restored = join(show, `restored-${n}.mxf`)
        const b = await round(n + 1, {
          base: () => sh(BY_HAND, handle, join(show, 'by-hand.mxf')),
          ours: async () => {
            await task(
              await t.post('/api/restoreactivities/', {
                content_type_id: contentType,
                asset_id: asset.json.id,
                path: restored,
              }),
            )
          },
          synced: () => sh(BY_HAND_SYNCED, handle, join(show, 'by-hand-synced.mxf')),
        })
        restore.base.push(b.base)
        restore.ours.push(b.ours)
        restore.synced.push(b.synced)
        for (const done of [
          join(byHand, 'archive.mxf'),
          join(byHand, 'archive-synced.mxf'),
          join(show, 'by-hand.mxf'),
          join(show, 'by-hand-synced.mxf'),
          handle,
          online,
        ])
          rmSync(done, { force: true })
        online = restored
      }
      if (wanted('archive')) report(archive)
      if (wanted('restore')) report(restore)
    }
  } finally {
    await t.stop()
    rmSync(t.dataDir, { recursive: true, force: true })
  }

  if (process.env.BENCH_RESULTS)
    writeFileSync(
      process.env.BENCH_RESULTS,
      JSON.stringify({
        bench: 'verified',
        headline: results.map((r) => {
          const s = summary(r)
          return [
            `Verified copy, ${r.name}: speed against ${s.against}`,
            `${s.verdict.toFixed(2)} (median ${median(r.ours).toFixed(3)} s against ${median(r.durable ? r.synced : r.base).toFixed(3)} s)`,
            `>= ${GOAL}`,
            s.pass ? 'pass' : 'FAIL',
          ]
        }),
      }),
    )

  if (process.env.BENCH_NO_DOC !== '1' && !ONLY) {
    const rate = (r: Result, s: number) => `${((r.bytes / s) * 2 ** -20).toFixed(0)} MiB/s`
    const cell = (r: Result, xs: number[]) => (xs.length ? `${median(xs).toFixed(3)} s (${rate(r, median(xs))})` : '')
    writeSection(
      resolve(import.meta.dir, '..', 'docs', 'benchmarks.md'),
      'verified',
      `## Verified copies against cp + xxhsum

- Date: ${host.date} (\`bun bench/verified.ts\`; not part of \`npm run bench\`)
- Machine: ${host.cpu}, ${host.cores} cores, ${host.ramGiB.toFixed(1)} GiB RAM, Linux ${host.kernel} (load average at start: ${host.load})
- Bun ${host.bun}; ${spawnSync('xxhsum', ['--version']).stderr.toString().split('\n')[0]!.trim()}; every source and target on the disk (${fsType}, ${DIR}), page cache warm; ${ROUNDS} rounds

| Case | cp + xxhsum (median) | Reelhouse (median) | Speed ratio to it (median of rounds) | cp + fsync + xxhsum (median) | Speed ratio to it | Goal | |
|---|---|---|---|---|---|---|---|
${results
  .map((r) => {
    const s = summary(r)
    return `| ${r.name} | ${cell(r, r.base)} | ${cell(r, r.ours)} | ${s.ratio.toFixed(2)} | ${cell(r, r.synced)} | ${r.synced.length ? s.syncedRatio.toFixed(2) : ''} | >= ${GOAL} of ${s.against} | ${s.pass ? 'pass' : 'FAIL'} |`
  })
  .join('\n')}

All rounds (seconds): ${results.map((r) => `${r.name}: cp + xxhsum ${fmt(r.base)}; Reelhouse ${fmt(r.ours)}${r.synced.length ? `; cp + fsync + xxhsum ${fmt(r.synced)}` : ''}`).join('. ')}.

What is measured (bench/verified.ts): the baseline is the same work done by hand, \`cp\` (GNU
coreutils, which lets the kernel copy with copy_file_range) and then \`xxhsum\` (xxHash64) of
every file of the copy (\`cp -r SRC DST && find DST -type f -print0 | xargs -0 xxhsum\` for the
project folders). Reelhouse: the two project copies through the API (\`POST /api/projectassets/\`
with \`copy_of\`, until the task has renamed the finished folder into place and the project is
ASSET_DONE; it also walks the tree, keeps times and modes, writes the copy's ASC MHL history and
progress rows; the 1 GiB file goes through the verified copy of src/storage/verified.ts, the
small files are read and read back in one call each); the durable one-file copy by the storage
layer (storage/archive.ts \`copyVerifiedTo\` with \`durable\`, the copy an archive with purge
makes, and a move across file systems the same way: copy, fsync, read back, compare, name
without replacing, sync the folder); the archive (without purge) and the restore through the
API (\`POST /api/archiveactivities/\`, \`POST /api/restoreactivities/\` with a new path, until
the task is done; the archive also writes the archive's ASC MHL generation). Each round runs every side once, after a \`sync\`, the
first side turning from round to round; before each side of the 1 GiB cases ${SETTLE_MIB} MiB are
written to a scratch file with dd, synced and removed, untimed (on this VM the first buffered
write of a GiB after another was written and synced is at times several times slower in the
kernel, whoever makes it, dd included); the copies of the small files are removed only after
the last round (on ext4, files made soon after many removals wait for the kernel's search for
an inode not recently freed). The ratio is baseline time / Reelhouse time; its median over the
rounds is the verdict.

Reelhouse does more than the baseline: every copy hashes the bytes read from the source, which
cp never looks at (every byte crosses memory three times, read from the source, written, read
back, where cp and xxhsum take two: src/storage/verified.ts runs the copy in two threads of its
own to make up for it); and the durable one-file copy makes the copy durable before it reads it
back (copied, then fsynced, so that the source of a move or a purge is removed only once the
copy is on the disk), which the baseline never waits for: on this disk that alone takes about as
long as the baseline's whole work (\`dd bs=1M count=1024\` of zeros: 0.28-0.31 s; with
\`conv=fsync\`: 0.63-0.76 s). An archive that leaves the file online and a restore do not wait
for the disk, as neither cp nor a project copy does: their source stays (storage/archive.ts).
Columns five and six are the baseline made as durable, \`cp SRC DST && sync DST && xxhsum DST\` (\`sync FILE\` fsyncs the file): the same
work by hand as the durable copy, whose goal is against it; every other goal is against cp +
xxhsum.
`,
    )
    console.error('wrote docs/benchmarks.md (verified)')
  }
  return results.every((r) => summary(r).pass)
}

function summary(r: Result) {
  const ratio = median(r.base.map((b, i) => b / r.ours[i]!))
  const syncedRatio = median(r.synced.map((b, i) => b / r.ours[i]!))
  const verdict = r.durable ? syncedRatio : ratio
  return {
    ratio,
    syncedRatio,
    verdict,
    pass: verdict >= GOAL,
    against: r.durable ? 'cp + fsync + xxhsum' : 'cp + xxhsum',
  }
}

const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')

process.exit((await main()) ? 0 : 1)
