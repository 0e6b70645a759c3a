// Assertions for the error envelope of api.md section 7 / service.md section 4, and a tracker
// for disposable folders made by a test file.
import { expect } from 'bun:test'
import { rmSync } from 'node:fs'
import { STATUS_CODES } from 'node:http'
import { tempDir } from './app.ts'

type Reply = { status: number; json: any; text: string }
type Where = { pointer: string } | { parameter: string }

/** The title service.md section 4 asks for: 'Validation Error' for 400 validation, else the reason phrase. */
export function titleFor(status: number, code: string): string {
  if (status === 400 && code !== 'parse_error' && code !== 'invalid_host') return 'Validation Error'
  return STATUS_CODES[status]!
}

/** One envelope entry, as the whole object (detail: any non-empty text). */
export function errorEntry(status: number, code: string, where?: Where) {
  return {
    status: String(status),
    code,
    detail: expect.stringMatching(/\S/),
    title: titleFor(status, code),
    ...(where ? { source: where } : {}),
  }
}

/** The reply is exactly the envelope with these entries, in this order. */
export function expectErrors(reply: Reply, status: number, entries: { code: string; where?: Where }[]) {
  if (reply.status !== status) throw new Error(`expected ${status}, got ${reply.status}: ${reply.text}`)
  expect(reply.json).toEqual({ errors: entries.map((e) => errorEntry(status, e.code, e.where)) })
}

/** The reply is the envelope with exactly one entry. */
export function expectError(reply: Reply, status: number, code: string, where?: Where) {
  expectErrors(reply, status, [{ code, where }])
}

/** Folders made with tempDir and removed together by cleanup(). */
export function folders() {
  const made: string[] = []
  return {
    make(prefix = 'reelhouse-dev-') {
      const dir = tempDir(prefix)
      made.push(dir)
      return dir
    },
    cleanup() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
    },
  }
}
