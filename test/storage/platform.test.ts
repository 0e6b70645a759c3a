// Where file work is done (src/storage/platform.ts), decided from (platform, arch), and how a
// refusal reaches a client: 501 not_implemented in the envelope, with the message that names the
// platform. Run on Linux: the Windows decision is tested as a decision, and the answer through the
// one error handler every request goes through.
import { expect, test } from 'bun:test'
import { FileWorkUnavailable, REFUSAL, fileWorkRefusal, requireFileWork } from '../../src/storage/platform.ts'
import { createFailures } from '../../src/http/failures.ts'
import { silentLog } from '../../src/util/log.ts'

const WINDOWS_ARM =
  'File operations are not available on Windows (win32 arm64): the folder handle calls are written for 64-bit x86 Windows only. The catalogue and the API work.'

test('file work is done on 64-bit Linux and macOS and on x64 Windows, refused elsewhere with the platform named', () => {
  const on = (platform: string, arch: string) => fileWorkRefusal(platform, arch)
  expect({
    'linux x64': on('linux', 'x64'),
    'linux arm64': on('linux', 'arm64'),
    'darwin x64': on('darwin', 'x64'),
    'darwin arm64': on('darwin', 'arm64'),
    'win32 x64': on('win32', 'x64'),
    'win32 arm64': on('win32', 'arm64'),
    'freebsd x64': on('freebsd', 'x64'),
    'linux ia32': on('linux', 'ia32'),
  }).toEqual({
    'linux x64': undefined,
    'linux arm64': undefined,
    'darwin x64': undefined,
    'darwin arm64': undefined,
    'win32 x64': undefined,
    'win32 arm64': WINDOWS_ARM,
    'freebsd x64':
      'File operations are not available on freebsd (freebsd x64): Reelhouse works on files only through open folders, written for Linux, macOS and Windows. The catalogue and the API work.',
    'linux ia32':
      'File operations are not available on Linux (linux ia32): the folder descriptor calls are written for 64-bit x86 and ARM processors only. The catalogue and the API work.',
  })
})

test('here (Linux x64 or arm64) nothing is refused', () => {
  expect(REFUSAL).toBeUndefined()
  expect(() => requireFileWork()).not.toThrow()
})

test('a refusal answers 501 not_implemented with its message, not a 500', async () => {
  const failures = createFailures(silentLog, () => [])
  const request = new Request('http://localhost/api/projectassets/1/')
  const response = failures.onError({ code: 'UNKNOWN', error: new FileWorkUnavailable(WINDOWS_ARM), request })
  expect({ status: response.status, body: await response.json() }).toEqual({
    status: 501,
    body: { errors: [{ status: '501', code: 'not_implemented', title: 'Not Implemented', detail: WINDOWS_ARM }] },
  })
})
