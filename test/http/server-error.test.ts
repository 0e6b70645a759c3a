// A bug (an error no service throws on purpose) answers 500 server_error in the envelope, with a
// request id the log line carries too, and never a stack trace: also when Elysia's own handling
// fails (a thrown null, issue 10 point 8) or an answer breaks its own schema.
import { afterAll, expect, test } from 'bun:test'
import { t as schema } from 'elysia'
import { createApp } from '../../src/app.ts'
import { createCore } from '../../src/core.ts'
import type { Log } from '../../src/util/log.ts'
import { catalogueWithUser } from '../helpers/app.ts'
import { errorEntry } from '../helpers/envelope.ts'
import { rawRequest } from '../helpers/process.ts'

const { db, key, close } = catalogueWithUser('admin')
afterAll(close)

/** An app logging its errors into the returned list. */
function loggingApp() {
  const logged: { message: string; fields?: Record<string, unknown> }[] = []
  const log: Log = { info() {}, warn() {}, error: (message, fields) => void logged.push({ message, fields }) }
  return { app: createApp(createCore(db, { log })), logged }
}

test('an unexpected error: 500 server_error with a request id that is in the log, no stack trace', async () => {
  const { app: base, logged } = loggingApp()
  const app = base.get('/api/boom', () => {
    throw new TypeError('cannot read properties of undefined')
  })

  const r = await app.handle(new Request('http://localhost/api/boom', { headers: { authorization: `Token ${key}` } }))
  const body: any = await r.json()
  expect(r.status).toBe(500)
  expect(body).toEqual({
    errors: [
      {
        status: '500',
        code: 'server_error',
        title: 'Internal Server Error',
        detail: expect.stringMatching(/request id \S+/),
      },
    ],
  })
  expect(JSON.stringify(body)).not.toContain('cannot read properties')
  const id = /request id (\S+?)\./.exec(body.errors[0].detail)![1]
  expect(logged).toEqual([
    {
      message: 'request failed',
      fields: expect.objectContaining({
        request_id: id,
        path: '/api/boom',
        error: expect.stringContaining('cannot read properties'),
      }),
    },
  ])
})

test('an answer that breaks its own response schema is a 500 server_error, logged, not a 400', async () => {
  const { app: base, logged } = loggingApp()
  const app = base.get('/api/misshapen', () => ({ status: 'ok' }) as never, {
    response: schema.Object({ count: schema.Integer() }),
  })
  const r = await app.handle(
    new Request('http://localhost/api/misshapen', { headers: { authorization: `Token ${key}` } }),
  )
  expect({ status: r.status, body: await r.json() }).toEqual({
    status: 500,
    body: { errors: [errorEntry(500, 'server_error')] },
  })
  expect(logged).toEqual([{ message: 'request failed', fields: expect.objectContaining({ path: '/api/misshapen' }) }])
})

test("a failure outside Elysia's handling (a thrown null) on a listening server: 500 server_error, logged, not Bun's page", async () => {
  const { app: base, logged } = loggingApp()
  const app = base
    .get('/api/null', () => {
      throw null
    })
    .listen({ hostname: '127.0.0.1', port: 0 })
  try {
    const reply = await rawRequest(
      app.server!.port!,
      `GET /api/null HTTP/1.1\r\nHost: nas\r\nAuthorization: Token ${key}\r\nConnection: close\r\n\r\n`,
    )
    expect({ status: reply.status, type: reply.headers['content-type'], body: reply.json }).toEqual({
      status: 500,
      type: expect.stringContaining('application/json'),
      body: { errors: [errorEntry(500, 'server_error')] },
    })
    expect(logged).toEqual([
      { message: 'request failed', fields: expect.objectContaining({ request_id: expect.any(String) }) },
    ])
  } finally {
    await app.stop(true)
  }
})
