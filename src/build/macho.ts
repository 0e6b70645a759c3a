// The code signature of a macOS executable (a 64-bit Mach-O): checked, and made again ad hoc.
// For build.ts only; nothing the program runs imports it.
//
// macOS refuses to run an arm64 executable whose signature does not check, and Gatekeeper (and
// `codesign -v`) refuses an x86_64 one whose signature is there but wrong. An ad-hoc signature
// has no certificate: it is a CodeDirectory, the SHA-256 of each 4 KiB page of the file up to the
// signature, inside a SuperBlob that LC_CODE_SIGNATURE points to at the end of __LINKEDIT. The
// layout is Apple's (xnu osfmk/kern/cs_blobs.h); what is written is what the Darwin linker writes
// for a linker-signed executable (Go's cmd/internal/codesign describes the same): one
// CodeDirectory, version 0x20400, flags adhoc|linker-signed, no special slots, the __TEXT
// segment as the executable segment. Mach-O fields are little-endian, the signature's big-endian.
//
// Written from those descriptions and checked here against Bun's validly signed darwin-arm64
// executable (every page hash matches, as checkSignature finds them); never run on a Mac.

const MH_MAGIC_64 = 0xfeedfacf
const MH_EXECUTE = 2
const CPU_TYPE_X86_64 = 0x01000007
const CPU_TYPE_ARM64 = 0x0100000c

const LC_SEGMENT_64 = 0x19
const LC_SYMTAB = 0x2
const LC_DYSYMTAB = 0xb
const LC_CODE_SIGNATURE = 0x1d
const LC_DYLD_INFO = 0x22
const LC_DYLD_INFO_ONLY = 0x80000022
/** The commands shaped as linkedit_data_command (cmd, cmdsize, dataoff, datasize): data in __LINKEDIT. */
const LINKEDIT_DATA = new Set([0x1d, 0x1e, 0x26, 0x29, 0x2b, 0x2e, 0x35, 0x80000033, 0x80000034])

const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0
const CSMAGIC_CODEDIRECTORY = 0xfade0c02
const CSSLOT_CODEDIRECTORY = 0
/** Special slots whose blob, when the SuperBlob holds one, is hashed into slot -N: requirements, entitlements, DER entitlements. */
const HASHED_BLOB_SLOTS = [2, 5, 7]

const CS_ADHOC = 0x2
const CS_LINKER_SIGNED = 0x20000
const CS_EXECSEG_MAIN_BINARY = 0x1
const CS_HASHTYPE_SHA256 = 2

/** The CodeDirectory's fixed part at version 0x20400 (up to execSegFlags). */
const CODE_DIRECTORY_SIZE = 88
const PAGE_LOG2 = 12
const PAGE = 1 << PAGE_LOG2

type Segment = { name: string; at: number; vmaddr: number; vmsize: number; fileoff: number; filesize: number }
type MachO = {
  view: DataView
  cputype: number
  filetype: number
  segments: Segment[]
  /** LC_CODE_SIGNATURE: where the command is and where its data is. */
  signature?: { at: number; dataoff: number; datasize: number }
  /** The end of each piece of __LINKEDIT data other than the signature. */
  linkeditEnds: number[]
}

/** Reads the header and load commands of a 64-bit little-endian Mach-O; throws for anything else. */
function parse(bytes: Uint8Array): MachO {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 32) throw new Error(`not a Mach-O file: ${bytes.length} bytes`)
  const magic = view.getUint32(0, false)
  if (magic === 0xcafebabe || magic === 0xcafebabf)
    throw new Error(
      'a universal (fat) Mach-O: only a single-architecture 64-bit Mach-O is handled; sign each architecture on its own',
    )
  const le = view.getUint32(0, true)
  if (le !== MH_MAGIC_64) {
    const what =
      le === 0xfeedface ? 'a 32-bit Mach-O' : magic === MH_MAGIC_64 ? 'a big-endian Mach-O' : 'not a Mach-O file'
    throw new Error(
      `${what} (magic 0x${magic.toString(16).padStart(8, '0')}): only a 64-bit little-endian Mach-O (0xfeedfacf) is handled`,
    )
  }
  const u32 = (o: number) => view.getUint32(o, true)
  const u64 = (o: number) => Number(view.getBigUint64(o, true))
  const ncmds = u32(16)
  const sizeofcmds = u32(20)
  if (32 + sizeofcmds > bytes.length) throw new Error('the load commands run past the end of the file')
  const macho: MachO = { view, cputype: u32(4), filetype: u32(12), segments: [], linkeditEnds: [] }
  let at = 32
  for (let i = 0; i < ncmds; i++) {
    if (at + 8 > 32 + sizeofcmds) throw new Error(`load command ${i} runs past the load commands`)
    const cmd = u32(at)
    const size = u32(at + 4)
    if (size < 8 || at + size > 32 + sizeofcmds)
      throw new Error(`load command ${i} (0x${cmd.toString(16)}) has a wrong size ${size}`)
    if (cmd === LC_SEGMENT_64) {
      const name = new TextDecoder().decode(bytes.subarray(at + 8, at + 24)).replace(/\0+$/, '')
      macho.segments.push({
        name,
        at,
        vmaddr: u64(at + 24),
        vmsize: u64(at + 32),
        fileoff: u64(at + 40),
        filesize: u64(at + 48),
      })
    } else if (cmd === LC_CODE_SIGNATURE) {
      if (macho.signature) throw new Error('two LC_CODE_SIGNATURE commands')
      macho.signature = { at, dataoff: u32(at + 8), datasize: u32(at + 12) }
    } else if (LINKEDIT_DATA.has(cmd)) {
      macho.linkeditEnds.push(u32(at + 8) + u32(at + 12))
    } else if (cmd === LC_SYMTAB) {
      // symoff, nsyms (16-byte nlist_64), stroff, strsize
      macho.linkeditEnds.push(u32(at + 8) + u32(at + 12) * 16, u32(at + 16) + u32(at + 20))
    } else if (cmd === LC_DYSYMTAB) {
      // indirectsymoff, nindirectsyms (4 bytes each)
      macho.linkeditEnds.push(u32(at + 56) + u32(at + 60) * 4)
    } else if (cmd === LC_DYLD_INFO || cmd === LC_DYLD_INFO_ONLY) {
      // rebase, bind, weak bind, lazy bind, export: five (offset, size) pairs
      for (let p = 8; p < 48; p += 8) macho.linkeditEnds.push(u32(at + p) + u32(at + p + 4))
    }
    at += size
  }
  return macho
}

export type SignatureCheck = {
  /** Every page hash matches and the signature covers everything before it. */
  ok: boolean
  /** One line: what was found. */
  detail: string
  /** The pages the CodeDirectory should cover: ceil(codeLimit / its page size). */
  pages: number
  /** Pages whose hash differs from the CodeDirectory's (or that it has no slot for). */
  mismatched: number
  /** Bytes between codeLimit and the signature: in the file, covered by no hash. */
  uncovered: number
  /** The CodeDirectory's flags (0x2 adhoc, 0x10000 runtime, 0x20000 linker-signed). */
  flags: number
  identifier: string
}

/** The hash a CodeDirectory names by hashType: a function giving the digest of `data` (in a buffer it reuses). */
function hasherOf(hashType: number): ((data: Uint8Array) => Uint8Array) | undefined {
  // 1 SHA-1, 2 SHA-256, 3 SHA-256 truncated (to hashSize, 20), 4 SHA-384.
  const digest = { 1: Bun.SHA1, 2: Bun.SHA256, 3: Bun.SHA256, 4: Bun.SHA384 }[hashType]
  if (!digest) return undefined
  const out = new Uint8Array(digest.byteLength)
  return (data) => {
    digest.hash(data, out)
    return out
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array, length: number): boolean {
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * Checks the embedded code signature of a 64-bit Mach-O: recomputes the hash of every page up to
 * the CodeDirectory's codeLimit and compares it with the CodeDirectory's (and the hashes of the
 * requirements and entitlements blobs, where it has those slots). Throws when `bytes` is not a
 * 64-bit little-endian Mach-O; a missing or malformed signature is a result with ok false.
 */
export function checkSignature(bytes: Uint8Array): SignatureCheck {
  const macho = parse(bytes)
  const result: SignatureCheck = {
    ok: false,
    detail: '',
    pages: 0,
    mismatched: 0,
    uncovered: 0,
    flags: 0,
    identifier: '',
  }
  const fail = (detail: string) => ({ ...result, ok: false, detail })
  const sig = macho.signature
  if (!sig) return fail('no code signature (no LC_CODE_SIGNATURE)')
  if (sig.dataoff + sig.datasize > bytes.length)
    return fail(`the signature (${sig.dataoff}+${sig.datasize}) runs past the end of the file (${bytes.length})`)
  const view = macho.view
  const be32 = (o: number) => view.getUint32(o, false)
  const base = sig.dataoff
  const end = sig.dataoff + sig.datasize
  if (sig.datasize < 12 || be32(base) !== CSMAGIC_EMBEDDED_SIGNATURE)
    return fail('the signature is not an embedded SuperBlob (0xfade0cc0)')
  const count = be32(base + 8)
  if (base + 12 + count * 8 > end) return fail("the SuperBlob's index runs past the signature")
  const blobs = new Map<number, { at: number; length: number }>()
  for (let i = 0; i < count; i++) {
    const at = base + be32(base + 12 + i * 8 + 4)
    if (at + 8 > end || be32(at + 4) < 8 || at + be32(at + 4) > end)
      return fail(`blob ${i} of the SuperBlob runs past the signature`)
    blobs.set(be32(base + 12 + i * 8), { at, length: be32(at + 4) })
  }
  const cd = blobs.get(CSSLOT_CODEDIRECTORY)
  if (!cd || cd.length < 44 || be32(cd.at) !== CSMAGIC_CODEDIRECTORY)
    return fail('the SuperBlob has no CodeDirectory (slot 0, 0xfade0c02)')
  const version = be32(cd.at + 8)
  result.flags = be32(cd.at + 12)
  const hashOffset = be32(cd.at + 16)
  const identOffset = be32(cd.at + 20)
  const nSpecialSlots = be32(cd.at + 24)
  const nCodeSlots = be32(cd.at + 28)
  let codeLimit = be32(cd.at + 32)
  const hashSize = bytes[cd.at + 36]!
  const hashType = bytes[cd.at + 37]!
  const pageLog2 = bytes[cd.at + 39]!
  if (version >= 0x20300 && cd.length >= 64 && codeLimit === 0) codeLimit = Number(view.getBigUint64(cd.at + 56, false))
  const identEnd = bytes.indexOf(0, cd.at + identOffset)
  if (identOffset >= cd.length || identEnd < 0 || identEnd >= cd.at + cd.length)
    return fail("the CodeDirectory's identifier runs past it")
  result.identifier = new TextDecoder().decode(bytes.subarray(cd.at + identOffset, identEnd))
  if (hashOffset < nSpecialSlots * hashSize || hashOffset + nCodeSlots * hashSize > cd.length)
    return fail("the CodeDirectory's hashes run past it")
  const hash = hasherOf(hashType)
  if (!hash || hashSize === 0 || hashSize > hash(new Uint8Array()).length)
    return fail(`unknown hash type ${hashType} (size ${hashSize})`)

  const pageSize = pageLog2 === 0 ? Math.max(codeLimit, 1) : 2 ** pageLog2
  result.pages = Math.ceil(codeLimit / pageSize)
  result.uncovered = sig.dataoff - codeLimit
  const hashes = cd.at + hashOffset
  for (let page = 0; page < result.pages; page++) {
    if (page >= nCodeSlots) {
      result.mismatched++
      continue
    }
    const start = page * pageSize
    const got = hash(bytes.subarray(start, Math.min(start + pageSize, codeLimit)))
    if (!equalBytes(got, bytes.subarray(hashes + page * hashSize), hashSize)) result.mismatched++
  }
  // Slot -N holds the hash of the blob in SuperBlob slot N (all zeros when there is none).
  let special = 0
  for (const slot of HASHED_BLOB_SLOTS) {
    if (slot > nSpecialSlots) continue
    const expected = bytes.subarray(hashes - slot * hashSize, hashes - (slot - 1) * hashSize)
    const blob = blobs.get(slot)
    const ok = blob
      ? equalBytes(hash(bytes.subarray(blob.at, blob.at + blob.length)), expected, hashSize)
      : expected.every((b) => b === 0)
    if (!ok) special++
  }

  const named = [
    result.flags & CS_ADHOC ? 'adhoc' : '',
    result.flags & 0x10000 ? 'runtime' : '',
    result.flags & CS_LINKER_SIGNED ? 'linker-signed' : '',
  ]
  const about = `flags 0x${result.flags.toString(16)} (${named.filter(Boolean).join('|') || 'none'}), hash type ${hashType}, identifier ${JSON.stringify(result.identifier)}`
  const problems = [
    nCodeSlots > result.pages ? `${nCodeSlots} code slots for ${result.pages} pages` : '',
    special ? `${special} special slots mismatched` : '',
    result.uncovered < 0 ? `codeLimit ${codeLimit} is past the signature's start ${sig.dataoff}` : '',
  ].filter(Boolean)
  result.ok = result.mismatched === 0 && result.uncovered === 0 && problems.length === 0
  result.detail = `${result.mismatched} of ${result.pages} pages mismatched, ${result.uncovered} bytes uncovered${problems.map((p) => `, ${p}`).join('')}; ${about}`
  return result
}

const alignUp = (n: number, to: number) => Math.ceil(n / to) * to

/**
 * A copy of a 64-bit Mach-O executable signed ad hoc: the file up to its LC_CODE_SIGNATURE's data
 * (the old signature dropped), then a new SuperBlob with one CodeDirectory (SHA-256 of every 4 KiB
 * page before it; `identifier` as its identifier), padded to a multiple of 16 bytes. The
 * command's datasize and __LINKEDIT's filesize and vmsize are set to the new end before the pages
 * are hashed (the load commands are in page 0). The same input gives the same bytes.
 *
 * Refused (thrown): a file without LC_CODE_SIGNATURE, or one whose signature is not the last
 * thing in __LINKEDIT and in the file, or with a segment after __LINKEDIT.
 */
export function signAdHoc(bytes: Uint8Array, identifier: string): Uint8Array {
  const macho = parse(bytes)
  const sig = macho.signature
  if (!sig) throw new Error('no LC_CODE_SIGNATURE: a place for the signature is not made here')
  const linkedit = macho.segments.find((s) => s.name === '__LINKEDIT')
  const text = macho.segments.find((s) => s.name === '__TEXT')
  if (!linkedit || !text) throw new Error(`no ${linkedit ? '__TEXT' : '__LINKEDIT'} segment`)
  const sigEnd = sig.dataoff + sig.datasize
  if (sigEnd !== bytes.length)
    throw new Error(`the signature ends at ${sigEnd}, not at the end of the file (${bytes.length})`)
  if (linkedit.fileoff + linkedit.filesize !== sigEnd)
    throw new Error(
      `the signature ends at ${sigEnd}, not at the end of __LINKEDIT (${linkedit.fileoff + linkedit.filesize})`,
    )
  if (sig.dataoff < linkedit.fileoff) throw new Error('the signature starts before __LINKEDIT')
  const after = macho.linkeditEnds.find((e) => e > sig.dataoff)
  if (after !== undefined)
    throw new Error(`other __LINKEDIT data ends at ${after}, after the signature's start (${sig.dataoff})`)
  const later = macho.segments.find(
    (s) => s !== linkedit && (s.vmaddr >= linkedit.vmaddr || (s.filesize > 0 && s.fileoff >= linkedit.fileoff)),
  )
  if (later) throw new Error(`segment ${later.name} lies after __LINKEDIT`)
  const cpuPage = macho.cputype === CPU_TYPE_ARM64 ? 0x4000 : macho.cputype === CPU_TYPE_X86_64 ? 0x1000 : undefined
  if (!cpuPage) throw new Error(`cputype 0x${macho.cputype.toString(16)}: only x86_64 and arm64 are handled`)
  // The input's own rounding of __LINKEDIT's vmsize is kept: Bun 1.4.5's darwin-x64 output rounds
  // it up to 16 KiB (filesize 0x104130, vmsize 0x108000), its darwin-arm64 one to 4 KiB (0xf5182,
  // 0xf6000); a rounding that is neither, to the processor's page.
  const vmAlign = [0x1000, 0x4000].find((a) => linkedit.vmsize === alignUp(linkedit.filesize, a)) ?? cpuPage
  const id = new TextEncoder().encode(identifier)
  if (id.length === 0 || id.includes(0)) throw new Error(`a wrong identifier ${JSON.stringify(identifier)}`)

  const codeLimit = alignUp(sig.dataoff, 16)
  const slots = Math.ceil(codeLimit / PAGE)
  const hashSize = 32
  const cdLength = CODE_DIRECTORY_SIZE + id.length + 1 + slots * hashSize
  const superLength = 12 + 8 + cdLength
  const end = alignUp(codeLimit + superLength, 16)
  if (end > 0xffffffff) throw new Error('the file would be 4 GiB or more')

  const out = new Uint8Array(end)
  out.set(bytes.subarray(0, sig.dataoff))
  const view = new DataView(out.buffer)
  // Load commands first: they are in page 0, which is hashed below.
  view.setUint32(sig.at + 8, codeLimit, true)
  view.setUint32(sig.at + 12, end - codeLimit, true)
  const filesize = end - linkedit.fileoff
  view.setBigUint64(linkedit.at + 32, BigInt(alignUp(filesize, vmAlign)), true)
  view.setBigUint64(linkedit.at + 48, BigInt(filesize), true)

  // SuperBlob: magic, length, count, then one index entry (slot 0 at offset 20).
  let at = codeLimit
  const put32 = (value: number) => {
    view.setUint32(at, value, false)
    at += 4
  }
  const put64 = (value: number) => {
    view.setBigUint64(at, BigInt(value), false)
    at += 8
  }
  put32(CSMAGIC_EMBEDDED_SIGNATURE)
  put32(superLength)
  put32(1)
  put32(CSSLOT_CODEDIRECTORY)
  put32(20)
  const cd = at
  put32(CSMAGIC_CODEDIRECTORY)
  put32(cdLength)
  put32(0x20400) // version: up to the executable segment's fields
  put32(CS_ADHOC | CS_LINKER_SIGNED)
  put32(CODE_DIRECTORY_SIZE + id.length + 1) // hashOffset
  put32(CODE_DIRECTORY_SIZE) // identOffset
  put32(0) // nSpecialSlots
  put32(slots) // nCodeSlots
  put32(codeLimit)
  out.set([hashSize, CS_HASHTYPE_SHA256, 0, PAGE_LOG2], at) // hashSize, hashType, platform, pageSize (log2)
  at += 4
  put32(0) // spare2
  put32(0) // scatterOffset
  put32(0) // teamOffset
  put32(0) // spare3
  put64(0) // codeLimit64 (codeLimit fits in 32 bits)
  put64(text.fileoff) // execSegBase
  put64(text.filesize) // execSegLimit
  put64(macho.filetype === MH_EXECUTE ? CS_EXECSEG_MAIN_BINARY : 0)
  if (at !== cd + CODE_DIRECTORY_SIZE) throw new Error('the CodeDirectory was written wrong')
  out.set(id, at)
  const hashes = cd + CODE_DIRECTORY_SIZE + id.length + 1
  for (let page = 0; page < slots; page++) {
    const start = page * PAGE
    Bun.SHA256.hash(
      out.subarray(start, Math.min(start + PAGE, codeLimit)),
      out.subarray(hashes + page * hashSize, hashes + (page + 1) * hashSize),
    )
  }
  return out
}
