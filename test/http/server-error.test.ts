// A bug (an error no service throws on purpose) answers 500 server_error in the envelope, with a
// request id the log line carries too, and never a stack trace.
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { createApp } from '../../src/app.ts'
import { openDb } from '../../src/db/client.ts'
import { migrate } from '../../src/db/migrate.ts'
import { createUsers } from '../../src/modules/users/service.ts'
import type { Log } from '../../src/util/log.ts'
import { tempDir } from '../helpers/app.ts'

const dir = tempDir()
const db = openDb(join(dir, 'reelhouse.db'))
afterAll(() => {
  db.$client.close()
  rmSync(dir, { recursive: true, force: true })
})

test('an unexpected error: 500 server_error with a request id that is in the log, no stack trace', async () => {
  migrate(db)
  const users = createUsers(db)
  users.add('admin', { superuser: true })
  const key = users.createKey('admin')
  const logged: { message: string; fields?: Record<string, unknown> }[] = []
  const log: Log = { info() {}, warn() {}, error: (message, fields) => void logged.push({ message, fields }) }
  const app = createApp({ db, log }).get('/api/boom', () => {
    throw new TypeError('cannot read properties of undefined')
  })

  const r = await app.handle(new Request('http://localhost/api/boom', { headers: { authorization: `Token ${key}` } }))
  const body: any = await r.json()
  expect(r.status).toBe(500)
  expect(body).toEqual({ errors: [{ status: '500', code: 'server_error', title: 'Internal Server Error', detail: expect.stringMatching(/request id \S+/) }] })
  expect(JSON.stringify(body)).not.toContain('cannot read properties')
  const id = /request id (\S+?)\./.exec(body.errors[0].detail)![1]
  expect(logged).toEqual([{ message: 'request failed', fields: expect.objectContaining({ request_id: id, path: '/api/boom', error: expect.stringContaining('cannot read properties') }) }])
})
