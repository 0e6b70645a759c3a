// What the probe read, merged into an asset's technical (pure; the import task's one call).
//
// The request's members win over the file's (`given`: what the requests of this task gave). A
// timecode is the user's or the file's, and `timecode_source` says which ("request" or "file"):
// a timecode a request gave is kept by every later import and rescan that gives none, while
// one read from the file is read again (the file may have been replaced). A timecode with no
// source (an asset imported before timecodes were probed) was a request's.
import { readTimecode } from '../../media/timecode.ts'
import type { AssetKind } from './model.ts'

/** The members that hold an asset's timecode, by kind. */
export const TIMECODE_MEMBERS: Record<AssetKind, readonly string[]> = {
  video: ['offset_frames', 'offset_string'],
  audio: ['time_code'],
  image: [],
}

/**
 * Members read from a WAV's own chunks (docs/media.md, Broadcast WAV): the file's alone, so that a
 * file imported again without them (replaced, or its chunks gone) loses them, and with them the
 * words they gave the search.
 */
const CHUNK_MEMBERS = ['bext', 'ixml'] as const

export function mergeProbed(
  kind: AssetKind,
  technical: Record<string, unknown>,
  probed: Record<string, unknown>,
  given: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...technical }
  for (const key of CHUNK_MEMBERS) if (probed[key] === undefined && !given.includes(key)) delete out[key]
  for (const [key, value] of Object.entries(probed)) if (!given.includes(key)) out[key] = value
  const members = TIMECODE_MEMBERS[kind]
  if (members.length === 0) return out
  const usersOwn =
    members.some((m) => given.includes(m)) ||
    (members.some((m) => technical[m] !== undefined) && technical.timecode_source !== 'file')
  if (usersOwn) {
    for (const m of members) {
      if (technical[m] === undefined) delete out[m]
      else out[m] = technical[m]
    }
    // A request's offset_string without fps: its frames are counted at the rate the file has.
    if (kind === 'video' && out.offset_frames === undefined && typeof out.offset_string === 'string') {
      const frames = framesAt(out.offset_string, out.fps)
      if (frames !== undefined) out.offset_frames = frames
    }
    out.timecode_source = 'request'
  } else if (members.some((m) => probed[m] !== undefined)) {
    // The file's timecode whole: a member it lacks now (frames of a label that fits no rate) goes.
    for (const m of members) if (probed[m] === undefined) delete out[m]
    // Counted at the asset's rate: a request's fps wins over the file's.
    if (kind === 'video' && typeof out.offset_string === 'string' && out.fps !== probed.fps) {
      const frames = framesAt(out.offset_string, out.fps)
      if (frames === undefined) delete out.offset_frames
      else out.offset_frames = frames
    }
    out.timecode_source = 'file'
  } else {
    // The file has no timecode (any more): one read from it before goes with it.
    for (const m of members) delete out[m]
    delete out.timecode_source
  }
  return out
}

function framesAt(label: string, fps: unknown): number | undefined {
  const m = typeof fps === 'string' ? /^(\d+)\/(\d+)$/.exec(fps) : null
  if (!m) return undefined
  const read = readTimecode(label, { num: Number(m[1]), den: Number(m[2]) }, { lenient: true })
  return 'frames' in read ? read.frames : undefined
}
