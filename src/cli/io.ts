// What a command reads and writes and the setting it runs in: the process's own streams,
// environment and working folder, or those a caller gives (the tests run the command line in
// their own process this way). A command reaches none of them but through its Io.

export type Writer = { write(text: string): void }

export type Io = {
  stdout: Writer
  /** The data= line, the one line of a failure, warnings; `isTTY` when it is a terminal (verify's progress). */
  stderr: Writer & { readonly isTTY?: boolean }
  /** REELHOUSE_*, XDG_DATA_HOME, HOME, LOCALAPPDATA, PATH (for git), npm_lifecycle_*. */
  env: Record<string, string | undefined>
  /**
   * What relative paths (--data, backup FILE, --ffmpeg) are resolved against; none: the process's
   * working folder, read only when a path is relative (config.ts resolveIn).
   */
  cwd?: string
  /**
   * Where user passwd reads the password: a terminal asks for it (on the process's own terminal,
   * the only one there is), anything else gives its first line.
   */
  stdin: { readonly isTTY: boolean; stream(): ReadableStream<Uint8Array> }
}

/** The process's own: stdin, stdout and stderr, process.env; the working folder when a path needs it. */
export function processIo(): Io {
  return {
    stdout: { write: (text) => void process.stdout.write(text) },
    stderr: {
      write: (text) => void process.stderr.write(text),
      get isTTY() {
        return process.stderr.isTTY === true
      },
    },
    env: process.env,
    // Looked at only when a password is read: nothing else touches stdin.
    stdin: {
      get isTTY() {
        return process.stdin.isTTY === true
      },
      stream: () => Bun.stdin.stream(),
    },
  }
}
