// The proxy's file name (docs/media.md, "Proxy names"): the source's own base name with the
// proxy's extension (A001C003.mov → A001C003.mp4), because Premiere Pro's Attach Proxies and
// DaVinci Resolve's Link Proxy Media find a clip's proxy by its file name, the extension aside.
// When that name (or one of its pictures' names) is taken in the proxy folder, by another clip
// of the production with the same name, the proxy is `<base>_<asset id>`: such a clip cannot be
// told apart by name in an editing tool anyway, and the id keeps the name unique and stable.
// Proxies made before this scheme are named `<asset id>.<ext>`; the proxy-name task renames them
// (modules/assetimport/proxyname.task.ts).

/** At most this many bytes of a base name: `<base>_<id>.poster.jpg` and the like stay under 255. */
const MAX_BASE_BYTES = 200
/** Characters a Windows or SMB file name cannot hold, and control characters. */
const UNSAFE = /[<>:"/\\|?*\u0000-\u001f]/g
/** Names Windows keeps for devices (CON, NUL.txt...): a proxy_root may be a Windows share. */
const DEVICE_NAME = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i

/** The source's file name without its last extension, made a safe file name ('' when nothing is left). */
export function sourceStem(sourcePath: string): string {
  const name = sourcePath.slice(Math.max(sourcePath.lastIndexOf('/'), sourcePath.lastIndexOf('\\')) + 1)
  const dot = name.lastIndexOf('.')
  // A leading dot is a hidden name, not an extension; hidden names are never given (proxy.ts).
  const stem = (dot > 0 ? name.slice(0, dot) : name).replace(UNSAFE, '_')
  return shorten(stem.replace(/^\.+/, '').replace(/[. ]+$/, ''))
}

/** The names to try, in order: the source's base name, then `<base>_<asset id>` (the header). */
export function proxyNames(sourcePath: string, assetId: number): { first: string; fallback: string } {
  const stem = sourceStem(sourcePath)
  if (!stem) return { first: String(assetId), fallback: String(assetId) }
  const fallback = `${stem}_${assetId}`
  return { first: DEVICE_NAME.test(stem) ? fallback : stem, fallback }
}

/** Whether `name` (a proxy's file name) is of the old scheme for asset `assetId`: `<id>.<ext>` or a numbered `<id>_<n>.<ext>`. */
export function isOldProxyName(name: string, assetId: number): boolean {
  const m = /^(\d+)(?:_\d+)?\.[A-Za-z0-9]+$/.exec(name)
  return m !== null && Number(m[1]) === assetId
}

/**
 * Whether the proxy named `name` is one the proxy-name task renames: of the old scheme, and not
 * already what the scheme names it (a source named `9.mov` of asset 9 has its proxy `9.mp4`).
 */
export function needsNewName(name: string, sourcePath: string, assetId: number): boolean {
  if (!isOldProxyName(name, assetId)) return false
  const stem = name.slice(0, name.lastIndexOf('.'))
  const names = proxyNames(sourcePath, assetId)
  return stem !== names.first && stem !== names.fallback
}

/** `text` cut to MAX_BASE_BYTES of UTF-8, at a character boundary. */
function shorten(text: string): string {
  if (Buffer.byteLength(text) <= MAX_BASE_BYTES) return text
  let out = ''
  for (const c of text) {
    if (Buffer.byteLength(out + c) > MAX_BASE_BYTES) break
    out += c
  }
  return out.replace(/[. ]+$/, '')
}
