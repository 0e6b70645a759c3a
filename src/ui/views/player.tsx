// The video player of an asset's page (asset.tsx), speaking source timecode: the clip's own
// timecode (its technical start timecode, offset_string, plus the frames played, at its fps; drop
// frame when that timecode is) shown as it plays and typed to go there (`10:00:12:05` and Enter),
// frame stepping (Left and Right; Shift for a second), the J/K/L shuttle (L forward at 1×, 2×, 4×;
// J backward the same, stepped by the page since browsers do not play backwards; K stops), in and
// out marks (I and O) shown on the timeline with their timecodes and the duration between them,
// the filmstrip of the asset's thumbnail strip under the timeline (its tiles drawn from the sprite
// with CSS background-position; a click goes there), and the asset's markers on the timeline (M
// adds one at the playhead with a note). The shortcuts act wherever focus is on the page but in a
// field (typing a note or a timecode never moves the player) or an open dialog; docs/operations.md,
// The web page, lists them as the page does.
//
// A frame is a time: frame n of the proxy spans [n/fps, (n+1)/fps). The player seeks to the middle
// of a frame, (n + 0.5)/fps, so that the browser shows that frame whatever its rounding, and reads
// the frame under the playhead as floor(currentTime × fps).
import { useSignal } from '@preact/signals'
import { useEffect, useRef } from 'preact/hooks'
import { ApiError, get, post } from '../api.ts'
import {
  type Rate,
  clockText,
  rateText,
  readRate,
  readTimecode,
  startTimecode,
  timecodeOfDay,
  timecodeText,
} from '../format.ts'
import { type StripIndex, stripIndex, tileAt, tileStyle } from '../strip.ts'
import './player.css'

/** What the player reads of an asset's record. */
export type Playable = {
  id: number
  name: string
  technical: Record<string, unknown>
  poster_url?: string
  strip_url?: string
}

/** A marker as GET /api/{kind}assets/{id}/markers/ answers it: a note at a time (or a range), by a user. */
type Marker = {
  id: number
  start_ms?: number
  end_ms?: number | null
  note?: string
  color?: string
  username?: string
  user?: string
}

/** The colours a marker may have (as editors' locators have them): CSS knows each by its name. */
const MARKER_COLORS = new Set([
  'red',
  'green',
  'blue',
  'cyan',
  'magenta',
  'yellow',
  'white',
  'black',
  'purple',
  'orange',
])

/** The shuttle's speeds, each L (or J) doubling up to the last. */
const SPEEDS = [1, 2, 4] as const
/** The width a filmstrip tile is given at most, in CSS pixels: the strip shows as many as fit. */
const STRIP_TILE = 112
/** Where the frame rate is unknown, the player steps by this many frames a second (and says so). */
const FALLBACK_FPS = 25

/** The shortcuts, as the list on the page says them (and docs/operations.md, The web page). */
export const SHORTCUTS: [string, string][] = [
  ['L', 'Play forward; again for 2× and 4×'],
  ['J', 'Play backward; again for 2× and 4×'],
  ['K', 'Stop'],
  ['Space', 'Play or stop'],
  ['← / →', 'One frame back or on'],
  ['Shift + ← / →', 'One second back or on'],
  ['Home / End', 'First or last frame (focus in the player)'],
  ['I / O', 'Mark in or out at the playhead'],
  ['Shift + I / O', 'Go to the in or out mark'],
  ['M', 'Add a marker at the playhead, with a note'],
  ['T', 'Type a timecode to go to'],
]

/** An element where keys type (a field, a list box) rather than drive the player. */
function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null
  if (!element || !element.tagName) return false
  const tag = element.tagName
  return (
    tag === 'INPUT' ||
    tag === 'TEXTAREA' ||
    tag === 'SELECT' ||
    element.isContentEditable ||
    element.closest('dialog') !== null
  )
}

/** A control whose own Space or Enter must keep working (a button, a link, a summary). */
const pressable = (target: EventTarget | null) =>
  Boolean((target as HTMLElement | null)?.closest?.('button, a[href], summary, [role="button"]'))

export function VideoPlayer({
  kind,
  record,
  src,
  onError,
}: {
  kind: 'video' | 'audio' | 'image'
  record: Playable
  src: string
  onError: () => void
}) {
  const video = useRef<HTMLVideoElement>(null)
  /** The playhead, in seconds of the proxy. */
  const time = useSignal(0)
  /** The proxy's length in seconds, once its metadata has come. */
  const length = useSignal(0)
  /** 0 stopped; 1, 2, 4 forward; -1, -2, -4 backward. */
  const shuttle = useSignal(0)
  const markIn = useSignal<number | undefined>(undefined)
  const markOut = useSignal<number | undefined>(undefined)
  const typed = useSignal('')
  const typedError = useSignal('')
  const said = useSignal('')
  const tcField = useRef<HTMLInputElement>(null)
  const box = useRef<HTMLDivElement>(null)

  const rate: Rate | undefined = readRate(record.technical.fps)
  const fps = rate ? rate.num / rate.den : FALLBACK_FPS
  const start = startTimecode(record.technical, rate)
  const drop = start?.drop ?? false
  const startFrames = start?.frames ?? 0
  const given = record.technical.duration
  const frames =
    typeof given === 'number' && Number.isFinite(given) && given > 0
      ? Math.round(given)
      : Math.max(1, Math.round(length.value * fps))
  const last = frames - 1
  const frameAt = (seconds: number) => Math.max(0, Math.min(last, Math.floor(seconds * fps + 1e-6)))
  const frame = frameAt(time.value)
  /** Frame `n` of the clip as source timecode (or clock time when the rate is unknown). */
  const label = (n: number) => (rate ? timecodeOfDay(startFrames + n, rate, drop) : clockText(n / fps))
  /** A length of `n` frames, as timecode. */
  const lengthOf = (n: number) => (rate ? timecodeText(n, rate, drop) : clockText(n / fps))

  const seekFrame = (n: number) => {
    const element = video.current
    const to = Math.max(0, Math.min(last, Math.round(n)))
    const seconds = (to + 0.5) / fps
    if (element) element.currentTime = seconds
    time.value = seconds
  }

  // Backward shuttle: the browser cannot play backwards, so the playhead is moved back each frame
  // of the screen by the time gone at the shuttle's speed (one seek at a time).
  const backward = useRef<{ frame: number; position: number; at: number } | undefined>(undefined)
  const stopBackward = () => {
    if (backward.current) cancelAnimationFrame(backward.current.frame)
    backward.current = undefined
  }
  const runBackward = () => {
    const element = video.current
    if (!element || backward.current) return
    const state = { frame: 0, position: element.currentTime, at: performance.now() }
    backward.current = state
    const tick = (now: number) => {
      if (backward.current !== state) return
      state.position = Math.max(0, state.position - ((now - state.at) / 1000) * -shuttle.peek())
      state.at = now
      if (!element.seeking) {
        element.currentTime = state.position
        time.value = state.position
      }
      if (state.position <= 0) {
        shuttle.value = 0
        stopBackward()
        return
      }
      state.frame = requestAnimationFrame(tick)
    }
    state.frame = requestAnimationFrame(tick)
  }

  const setShuttle = (speed: number) => {
    const element = video.current
    if (!element) return
    shuttle.value = speed
    if (speed > 0) {
      stopBackward()
      element.playbackRate = speed
      void element.play().catch(() => {
        if (shuttle.peek() === speed) shuttle.value = 0
      })
    } else {
      element.pause()
      if (speed < 0) runBackward()
      else {
        stopBackward()
        // Stopped between frames: the playhead settles on the frame shown.
        seekFrame(frameAt(element.currentTime))
      }
    }
  }
  const forward = () => {
    const s = shuttle.peek()
    setShuttle(s <= 0 ? SPEEDS[0] : Math.min(SPEEDS[SPEEDS.length - 1]!, s * 2))
  }
  const reverse = () => {
    const s = shuttle.peek()
    setShuttle(s >= 0 ? -SPEEDS[0] : Math.max(-SPEEDS[SPEEDS.length - 1]!, s * 2))
  }
  const stop = () => setShuttle(0)
  const step = (by: number) => {
    if (shuttle.peek() !== 0) stop()
    seekFrame(frameAt(time.peek()) + by)
  }
  const setIn = () => {
    const at = frameAt(time.peek())
    markIn.value = at
    if (markOut.peek() !== undefined && markOut.peek()! < at) markOut.value = undefined
    said.value = `In at ${label(at)}.`
  }
  const setOut = () => {
    const at = frameAt(time.peek())
    markOut.value = at
    if (markIn.peek() !== undefined && markIn.peek()! > at) markIn.value = undefined
    said.value = `Out at ${label(at)}.`
  }

  // The playhead follows the video as it plays, and after every seek.
  useEffect(() => {
    const element = video.current
    if (!element) return
    let frameRequest = 0
    const follow = () => {
      time.value = element.currentTime
      if (!element.paused) frameRequest = requestAnimationFrame(follow)
    }
    const onTime = () => {
      if (!backward.current) time.value = element.currentTime
    }
    const onPlay = () => {
      cancelAnimationFrame(frameRequest)
      frameRequest = requestAnimationFrame(follow)
    }
    const onPause = () => {
      cancelAnimationFrame(frameRequest)
      if (!backward.current && shuttle.peek() > 0) shuttle.value = 0
      onTime()
    }
    const onMeta = () => {
      length.value = Number.isFinite(element.duration) ? element.duration : 0
      onTime()
    }
    element.addEventListener('timeupdate', onTime)
    element.addEventListener('seeked', onTime)
    element.addEventListener('play', onPlay)
    element.addEventListener('pause', onPause)
    element.addEventListener('ended', onPause)
    element.addEventListener('loadedmetadata', onMeta)
    if (element.readyState >= 1) onMeta()
    return () => {
      cancelAnimationFrame(frameRequest)
      stopBackward()
      element.removeEventListener('timeupdate', onTime)
      element.removeEventListener('seeked', onTime)
      element.removeEventListener('play', onPlay)
      element.removeEventListener('pause', onPause)
      element.removeEventListener('ended', onPause)
      element.removeEventListener('loadedmetadata', onMeta)
    }
  }, [src])

  const markers = useMarkers(kind, record.id)
  const adding = useSignal<number | undefined>(undefined)

  // The shortcuts: wherever focus is, but in a field or a dialog.
  const keys = useRef<(event: KeyboardEvent) => void>(() => {})
  keys.current = (event: KeyboardEvent) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key
    const actions: Record<string, () => void> = {
      ArrowLeft: () => step(event.shiftKey ? -Math.round(fps) : -1),
      ArrowRight: () => step(event.shiftKey ? Math.round(fps) : 1),
      j: reverse,
      k: stop,
      l: forward,
      i: () => (event.shiftKey ? markIn.peek() !== undefined && seekFrame(markIn.peek()!) : setIn()),
      o: () => (event.shiftKey ? markOut.peek() !== undefined && seekFrame(markOut.peek()!) : setOut()),
      t: () => tcField.current?.focus(),
    }
    // Home and End scroll the page unless focus is in the player.
    if (box.current?.contains(event.target as Node)) {
      actions.Home = () => step(-frames)
      actions.End = () => step(frames)
    }
    if (markers.canAdd.peek())
      actions.m = () => {
        stop()
        adding.value = frameAt(time.peek())
      }
    if (!pressable(event.target)) actions[' '] = () => (shuttle.peek() === 0 ? forward() : stop())
    const action = actions[key]
    if (!action) return
    event.preventDefault()
    action()
  }
  useEffect(() => {
    const listener = (event: KeyboardEvent) => keys.current(event)
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])

  const goTo = (event: Event) => {
    event.preventDefault()
    if (!rate) {
      typedError.value = 'This clip has no frame rate to count timecode at.'
      return
    }
    const read = readTimecode(typed.value, rate, drop)
    if ('error' in read) {
      typedError.value = read.error
      return
    }
    const target = read.relative ? frameAt(time.peek()) + read.relative * read.frames : read.frames - startFrames
    if (target < 0 || target > last) {
      typedError.value = `${read.relative ? 'That' : timecodeOfDay(read.frames, rate, drop)} is outside this clip, which runs ${label(0)} to ${label(last)}.`
      return
    }
    typedError.value = ''
    if (shuttle.peek() !== 0) stop()
    seekFrame(target)
    said.value = `Went to ${label(target)}.`
  }

  const timecodeNote = !rate
    ? `Frame rate unknown: times in hours, minutes, seconds; steps of 1/${FALLBACK_FPS} s.`
    : start
      ? `${rateText(rate)}${drop ? ', drop frame' : ''}; source timecode from ${start.label}.`
      : `${rateText(rate)}; the clip has no source timecode: counted from 00:00:00:00.`
  const shuttleText =
    shuttle.value === 0 ? 'Stopped' : `${shuttle.value > 0 ? 'Forward' : 'Backward'} ${Math.abs(shuttle.value)}×`
  const percent = (n: number) => `${frames > 1 ? (n / frames) * 100 : 0}%`
  const inAt = markIn.value
  const outAt = markOut.value
  return (
    <div class="player" data-testid="player" ref={box}>
      <video
        ref={video}
        preload="metadata"
        src={src}
        poster={record.poster_url || undefined}
        aria-label={`Preview of ${record.name}`}
        onError={onError}
        onClick={() => (shuttle.peek() === 0 ? forward() : stop())}
      />
      <div class="player-readout">
        <p class="player-tc-line">
          <span class="visually-hidden">Timecode </span>
          <span class="player-tc" data-testid="player-timecode">
            {label(frame)}
          </span>
          <span class="player-shuttle" data-testid="player-shuttle">
            {shuttleText}
          </span>
        </p>
        <p class="muted player-note">{timecodeNote}</p>
      </div>
      <div class="player-timeline">
        <div
          class="player-bar"
          role="slider"
          tabIndex={0}
          aria-label="Playhead"
          aria-valuemin={0}
          aria-valuemax={last}
          aria-valuenow={frame}
          aria-valuetext={label(frame)}
          onPointerDown={(event) => {
            const bar = event.currentTarget
            const seekAt = (x: number) => {
              const box = bar.getBoundingClientRect()
              seekFrame(Math.floor(((x - box.left) / box.width) * frames))
            }
            if (shuttle.peek() !== 0) stop()
            bar.setPointerCapture(event.pointerId)
            seekAt(event.clientX)
            const move = (e: PointerEvent) => seekAt(e.clientX)
            const up = () => {
              bar.removeEventListener('pointermove', move)
              bar.removeEventListener('pointerup', up)
              bar.removeEventListener('pointercancel', up)
            }
            bar.addEventListener('pointermove', move)
            bar.addEventListener('pointerup', up)
            bar.addEventListener('pointercancel', up)
          }}
        >
          {inAt !== undefined && (
            <div
              class="player-range"
              data-testid="player-range"
              style={{
                left: percent(inAt),
                width: outAt === undefined ? `calc(100% - ${percent(inAt)})` : percent(outAt - inAt + 1),
              }}
            />
          )}
          {inAt === undefined && outAt !== undefined && (
            <div class="player-range" data-testid="player-range" style={{ left: '0%', width: percent(outAt + 1) }} />
          )}
          <div class="player-played" style={{ width: percent(frame) }} />
          <div class="player-head" style={{ left: percent(frame + 0.5) }} />
        </div>
        {markers.list.value.map((m) => {
          const at = markerFrame(m, fps)
          return (
            <button
              key={m.id}
              type="button"
              class="player-marker"
              style={{
                left: percent(Math.min(at, last) + 0.5),
                backgroundColor: MARKER_COLORS.has(m.color ?? '') ? m.color : 'red',
              }}
              title={`${label(at)} ${m.note ?? ''}`}
              aria-label={`Marker at ${label(at)}: ${m.note || 'no note'}`}
              onClick={() => seekFrame(at)}
            />
          )
        })}
      </div>
      {record.strip_url && (
        <Filmstrip
          url={record.strip_url}
          seconds={frames / fps}
          current={time.value}
          onSeek={(s) => seekFrame(s * fps)}
          label={(s) => label(frameAt(s))}
        />
      )}
      <div class="player-controls" role="group" aria-label="Player controls">
        <button type="button" onClick={() => step(-1)} title="Left arrow">
          <span aria-hidden="true">◀︎ </span>Frame back
        </button>
        <button type="button" onClick={reverse} title="J">
          <span aria-hidden="true">◀︎◀︎ </span>Back
        </button>
        <button type="button" onClick={() => (shuttle.peek() === 0 ? forward() : stop())} title="Space, K, L">
          {shuttle.value === 0 ? 'Play' : 'Stop'}
        </button>
        <button type="button" onClick={forward} title="L">
          Forward<span aria-hidden="true"> ▶︎▶︎</span>
        </button>
        <button type="button" onClick={() => step(1)} title="Right arrow">
          Frame on<span aria-hidden="true"> ▶︎</span>
        </button>
        <button type="button" onClick={setIn} title="I">
          Mark in
        </button>
        <button type="button" onClick={setOut} title="O">
          Mark out
        </button>
        {(inAt !== undefined || outAt !== undefined) && (
          <button
            type="button"
            onClick={() => {
              markIn.value = undefined
              markOut.value = undefined
              said.value = 'Marks cleared.'
            }}
          >
            Clear marks
          </button>
        )}
        {markers.canAdd.value && (
          <button
            type="button"
            title="M"
            onClick={() => {
              stop()
              adding.value = frameAt(time.peek())
            }}
          >
            Add marker
          </button>
        )}
      </div>
      <dl class="player-marks">
        <dt>In</dt>
        <dd data-testid="player-in">{inAt === undefined ? '—' : label(inAt)}</dd>
        <dt>Out</dt>
        <dd data-testid="player-out">{outAt === undefined ? '—' : label(outAt)}</dd>
        <dt>Duration</dt>
        <dd data-testid="player-marked">
          {inAt !== undefined && outAt !== undefined ? lengthOf(outAt - inAt + 1) : '—'}
        </dd>
        <dt>Clip</dt>
        <dd>
          {label(0)} to {label(last)} ({lengthOf(frames)})
        </dd>
      </dl>
      <form class="player-goto" onSubmit={goTo} noValidate>
        <label for="player-goto">Go to timecode</label>
        <input
          id="player-goto"
          ref={tcField}
          value={typed.value}
          autocomplete="off"
          spellcheck={false}
          placeholder={label(0)}
          aria-invalid={typedError.value ? 'true' : undefined}
          aria-describedby={typedError.value ? 'player-goto-error' : 'player-goto-hint'}
          onInput={(e) => {
            typed.value = e.currentTarget.value
            typedError.value = ''
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              typedError.value = ''
              e.currentTarget.blur()
            }
          }}
        />
        <button type="submit">Go</button>
        {typedError.value ? (
          <p class="field-error" id="player-goto-error" role="alert" data-testid="player-goto-error">
            {typedError.value}
          </p>
        ) : (
          <p class="muted" id="player-goto-hint">
            HH:MM:SS:FF, its digits (10001205), or +/− an offset; Enter goes there.
          </p>
        )}
      </form>
      <p class="visually-hidden" role="status">
        {said.value}
      </p>
      {adding.value !== undefined && (
        <AddMarker
          kind={kind}
          id={record.id}
          at={label(adding.value)}
          ms={Math.ceil((adding.value * 1000) / fps - 1e-9)}
          onDone={(added) => {
            adding.value = undefined
            if (added) {
              markers.reload()
              said.value = 'Marker added.'
            }
          }}
        />
      )}
      {markers.list.value.length > 0 && (
        <section class="player-markers" aria-labelledby="player-markers">
          <h3 id="player-markers">Markers</h3>
          <ul>
            {markers.list.value.map((m) => {
              const at = markerFrame(m, fps)
              // end_ms is after the range's last frame.
              const end = typeof m.end_ms === 'number' ? frameOfMs(m.end_ms, fps) - 1 : undefined
              return (
                <li key={m.id}>
                  <button type="button" class="player-marker-go" onClick={() => seekFrame(at)}>
                    {label(at)}
                    {end !== undefined && end > at ? ` to ${label(end)}` : ''}
                  </button>{' '}
                  {m.note}
                  {(m.username ?? m.user) && <span class="muted"> ({m.username ?? m.user})</span>}
                </li>
              )
            })}
          </ul>
        </section>
      )}
      <details class="player-keys">
        <summary>Keyboard shortcuts</summary>
        <dl>
          {SHORTCUTS.map(([keyName, what]) => (
            <div key={keyName}>
              <dt>
                <kbd>{keyName}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
        <p class="muted">They act wherever focus is, but in a field.</p>
      </details>
    </div>
  )
}

/** The frame at `ms` milliseconds from the first (the one shown then), at `fps`. */
const frameOfMs = (ms: number, fps: number) => Math.max(0, Math.floor((ms * fps) / 1000 + 1e-6))
/** A marker's frame at `fps`. */
const markerFrame = (m: Marker, fps: number) => frameOfMs(m.start_ms ?? 0, fps)

/**
 * The asset's markers. A 404 (a server without markers) or any other failure: none, and no way to
 * add one; canAdd once the list answered.
 */
function useMarkers(kind: string, id: number) {
  const list = useSignal<Marker[]>([])
  const canAdd = useSignal(false)
  const round = useSignal(0)
  useEffect(() => {
    const abort = new AbortController()
    get<Marker[]>(`/api/${kind}assets/${id}/markers/`, undefined, abort.signal).then(
      (answer) => {
        list.value = Array.isArray(answer.data) ? answer.data.filter((m) => typeof m.start_ms === 'number') : []
        canAdd.value = true
      },
      () => {
        if (abort.signal.aborted) return
        list.value = []
        canAdd.value = false
      },
    )
    return () => abort.abort()
  }, [kind, id, round.value])
  return { list, canAdd, reload: () => round.value++ }
}

/** The note of a new marker at the playhead: Enter saves (POST), Escape or Cancel drops it. */
function AddMarker({
  kind,
  id,
  at,
  ms,
  onDone,
}: {
  kind: string
  id: number
  at: string
  ms: number
  onDone: (added: boolean) => void
}) {
  const note = useSignal('')
  const error = useSignal('')
  const busy = useSignal(false)
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => field.current?.focus(), [])
  const save = async (event: Event) => {
    event.preventDefault()
    busy.value = true
    try {
      await post(`/api/${kind}assets/${id}/markers/`, { start_ms: ms, note: note.value })
      onDone(true)
    } catch (failure) {
      busy.value = false
      error.value = failure instanceof ApiError ? failure.message : 'The server could not be reached.'
    }
  }
  return (
    <form class="player-add-marker" onSubmit={(e) => void save(e)} aria-label="New marker">
      <label for="player-marker-note">Marker at {at}: note</label>
      <input
        id="player-marker-note"
        ref={field}
        value={note.value}
        onInput={(e) => (note.value = e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault()
            onDone(false)
          }
        }}
        aria-describedby={error.value ? 'player-marker-error' : undefined}
      />
      <button type="submit" class="primary" disabled={busy.value}>
        {busy.value ? 'Saving…' : 'Add marker'}
      </button>
      <button type="button" onClick={() => onDone(false)} disabled={busy.value}>
        Cancel
      </button>
      {error.value && (
        <p class="field-error" id="player-marker-error" role="alert">
          {error.value}
        </p>
      )}
    </form>
  )
}

/**
 * The filmstrip under the timeline: as many tiles as fit its width, each the thumbnail nearest its
 * time, laid along the clip as the timeline is; a tile is a button that goes to its time.
 */
function Filmstrip({
  url,
  seconds,
  current,
  onSeek,
  label,
}: {
  url: string
  seconds: number
  current: number
  onSeek: (seconds: number) => void
  label: (seconds: number) => string
}) {
  const strip = useSignal<StripIndex | undefined>(undefined)
  const width = useSignal(0)
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    let live = true
    void stripIndex(url).then((s) => {
      if (live) strip.value = s
    })
    return () => {
      live = false
    }
  }, [url])
  useEffect(() => {
    const element = box.current
    if (!element) return
    const observer = new ResizeObserver(() => (width.value = element.clientWidth))
    observer.observe(element)
    width.value = element.clientWidth
    return () => observer.disconnect()
  }, [strip.value])
  const s = strip.value
  if (!s) return null
  const count = Math.max(1, Math.min(s.count, Math.ceil(width.value / STRIP_TILE) || 1))
  const tileWidth = width.value / count
  const tileHeight = (tileWidth * s.tile_height) / s.tile_width
  const tiles = []
  for (let j = 0; j < count; j++) {
    const at = (j / count) * seconds
    const next = ((j + 1) / count) * seconds
    const here = current >= at && (current < next || j === count - 1)
    tiles.push(
      <button
        key={j}
        type="button"
        class="player-strip-tile"
        aria-current={here ? 'true' : undefined}
        aria-label={`Go to ${label(at)}`}
        style={{
          width: `${tileWidth}px`,
          height: `${tileHeight}px`,
          ...tileStyle(s, tileAt(s, at * 1000), tileWidth, tileHeight),
        }}
        onClick={() => onSeek(at)}
      />,
    )
  }
  return (
    <div ref={box} class="player-strip" role="group" aria-label="Filmstrip" data-testid="player-strip">
      {width.value > 0 && tiles}
    </div>
  )
}
