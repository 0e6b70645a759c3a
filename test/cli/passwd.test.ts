// `reelhouse user passwd`: the password from stdin's first line (or asked twice on a terminal,
// not echoed, edited as a line), never printed, kept as an Argon2id hash; a serve running in another process
// takes it (and a change, and --clear) from the next request.
import { Database } from 'bun:sqlite'
import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../helpers/app.ts'
import {
  BOUND_MS,
  cleanEnv,
  CLIS,
  killAll,
  lines,
  ROOT,
  runCli,
  SOURCE_CLI,
  startServe,
  TEST_TIMEOUT_MS,
} from '../helpers/process.ts'
import { waitFor } from '../helpers/wait.ts'

// Child processes on a loaded machine, each hashing with Argon2: more room than 5 s, still bounded.
setDefaultTimeout(TEST_TIMEOUT_MS)

const dirs: string[] = []
afterEach(() => killAll())
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A catalogue with the user ana. */
async function withAna() {
  const data = tempDir('reelhouse-passwd-')
  dirs.push(data)
  expect((await runCli(['migrate', '--data', data])).code).toBe(0)
  expect((await runCli(['user', 'add', 'ana', '--data', data])).code).toBe(0)
  return data
}

const passwd = (data: string, input: string | undefined, ...more: string[]) =>
  runCli(['user', 'passwd', 'ana', '--data', data, ...more], { input })
const hashOf = (data: string, name = 'ana') => {
  const db = new Database(join(data, 'reelhouse.db'), { readonly: true })
  try {
    return db
      .query<{ password_hash: string | null }, [string]>('SELECT password_hash FROM users WHERE username = ?')
      .get(name)!.password_hash
  } finally {
    db.close()
  }
}
const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` })

test('from stdin: the first line is the password, nothing of it is printed, only its Argon2id hash is kept', async () => {
  const data = await withAna()
  const r = await passwd(data, 'Tr0ub4dor&3 with spaces\r\nthe second line is not read\n')
  expect(r).toEqual({ code: 0, stdout: 'password of ana set\n', stderr: `data=${data}\n` })
  const hash = hashOf(data)!
  expect(hash).toStartWith('$argon2id$')
  expect(hash).not.toContain('Tr0ub4dor')
  expect(await Bun.password.verify('Tr0ub4dor&3 with spaces', hash)).toBe(true)
})

test('an empty password, no input, an unknown user: exit 1, one line, nothing changed', async () => {
  const data = await withAna()
  for (const input of ['\n', '', undefined]) {
    const r = await passwd(data, input)
    expect({ code: r.code, stdout: r.stdout, stderr: lines(r.stderr) }).toEqual({
      code: 1,
      stdout: '',
      stderr: [`data=${data}`, 'reelhouse: the password is empty; nothing changed'],
    })
  }
  const bob = await runCli(['user', 'passwd', 'bob', '--data', data], { input: 'secret\n' })
  expect({ code: bob.code, stderr: lines(bob.stderr) }).toEqual({
    code: 1,
    stderr: [`data=${data}`, 'reelhouse: no user named "bob"'],
  })
  expect(hashOf(data)).toBeNull()
  // A password is never an argument (it would show in ps and the shell's history).
  expect((await runCli(['user', 'passwd', 'ana', 'secret', '--data', data])).code).toBe(2)
})

test('while serve runs in another process: a new password works from the next request, the old one fails; --clear removes it', async () => {
  const data = await withAna()
  const server = await startServe(data)
  const get = (credentials: string) => fetch(`${server.api}/devices/`, { headers: basic(credentials) })

  expect((await passwd(data, 'first one\n')).code).toBe(0)
  expect((await get('ana:first one')).status).toBe(200)
  // Verified once, then remembered by the server; the new hash makes it forget.
  expect((await get('ana:first one')).status).toBe(200)

  expect((await passwd(data, 'second one\n')).code).toBe(0)
  const old = await get('ana:first one')
  expect({ status: old.status, body: await old.json() }).toEqual({
    status: 401,
    body: { errors: [expect.objectContaining({ code: 'authentication_failed' })] },
  })
  expect((await get('ana:second one')).status).toBe(200)

  expect(await passwd(data, undefined, '--clear')).toEqual({
    code: 0,
    stdout: 'password of ana cleared\n',
    stderr: `data=${data}\n`,
  })
  expect(hashOf(data)).toBeNull()
  expect((await get('ana:second one')).status).toBe(401)
  expect((await passwd(data, undefined, '--clear')).stdout).toBe('ana had no password\n')
  // Nothing of a password reached the server's log either.
  expect(server.proc.stderr + server.proc.stdout).not.toMatch(/first one|second one/)
})

// A terminal, through script(1)'s pseudo-terminal: the password is asked twice and not echoed.
const script = Bun.which('script')

/**
 * Runs user passwd for ana on a pseudo-terminal, typing each answer's keys (one write a key) once
 * its prompt shows, then Enter. `seen` is what the terminal showed, without readline's cursor
 * movements (CSI sequences) and carriage returns.
 */
async function onTerminal(cli: string[], data: string, answers: string[][]) {
  const command = [...cli, 'user', 'passwd', 'ana', '--data', data].map((a) => `'${a}'`).join(' ')
  const child = Bun.spawn([script!, '-q', '-e', '-c', command, '/dev/null'], {
    cwd: ROOT,
    env: cleanEnv(),
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: BOUND_MS,
  })
  let seen = ''
  const reading = (async () => {
    for await (const chunk of child.stdout) seen += new TextDecoder().decode(chunk)
  })()
  for (const [i, keys] of answers.entries()) {
    // Typed only once the prompt shows: raw mode is on by then (asked before, the terminal would echo).
    await waitFor(() => (seen.match(/password for ana: |again: /g) ?? []).length > i, 'the prompt', {
      ms: BOUND_MS,
      everyMs: 20,
    })
    for (const key of [...keys, '\r']) {
      child.stdin.write(key)
      await child.stdin.flush()
    }
  }
  const code = await child.exited
  await reading
  return { code, seen: seen.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').replaceAll('\r', '') }
}

test.skipIf(!script)('on a terminal: asked twice, not echoed; two different answers change nothing', async () => {
  const data = await withAna()
  const same = await onTerminal(SOURCE_CLI, data, [['s3cret phrase'], ['s3cret phrase']])
  expect(same.code).toBe(0)
  expect(same.seen).toBe(`data=${data}\npassword for ana: \nagain: \npassword of ana set\n`)
  const hash = hashOf(data)!
  expect(await Bun.password.verify('s3cret phrase', hash)).toBe(true)

  const differ = await onTerminal(SOURCE_CLI, data, [['first-Answer-1'], ['other-Answer-2']])
  expect(differ.code).toBe(1)
  expect(differ.seen).toContain('reelhouse: the passwords differ; nothing changed')
  expect(differ.seen).not.toMatch(/Answer/)
  expect(hashOf(data)).toBe(hash)
})

describe.each(CLIS)('on a terminal, %s: the line is edited as typed', (_, cli) => {
  test.skipIf(!script)('a b ← c ⌫ d ⏎ sets "adb", which logs in over HTTP Basic; the keys\' bytes do not', async () => {
    const data = await withAna()
    // As readline edits a line: "ab", ← puts the cursor between a and b, c goes in there ("acb"),
    // backspace takes the c back out ("ab", the cursor still after a), d goes in there: "adb".
    // Before, the bytes were kept as sent: a, b, ESC [ D, then c rubbed out by ⌫, then d ("ab\x1b[Dd").
    const keys = ['a', 'b', '\x1b[D', 'c', '\x7f', 'd']
    const typed = await onTerminal(await cli(), data, [keys, keys])
    expect(typed).toEqual({ code: 0, seen: `data=${data}\npassword for ana: \nagain: \npassword of ana set\n` })
    const server = await startServe(data)
    const get = (credentials: string) => fetch(`${server.api}/devices/`, { headers: basic(credentials) })
    expect([(await get('ana:adb')).status, (await get('ana:ab\x1b[Dd')).status]).toEqual([200, 401])
  })
})
