// The Windows data folder's access list (src/util/winacl.ts): the list wanted, and when a list
// read back from Windows counts as that one. The calls themselves run in the Windows executable
// under Wine (test/cli/windows.test.ts: the start's line about the access list).
import { expect, test } from 'bun:test'
import { privateSddl, sameSddl } from '../../src/util/winacl.ts'

const ANA = 'S-1-5-21-1004336348-1177238915-682003330-1001'

test('the folder’s list: protected, full control for the user and SYSTEM, inherited by what is made in it; a file’s without inheritance; SYSTEM once for a service', () => {
  expect(privateSddl(ANA, true)).toBe(`D:P(A;OICI;FA;;;${ANA})(A;OICI;FA;;;SY)`)
  expect(privateSddl(ANA, false)).toBe(`D:P(A;;FA;;;${ANA})(A;;FA;;;SY)`)
  expect(privateSddl('S-1-5-18', true)).toBe('D:P(A;OICI;FA;;;SY)')
})

test('a list read back counts as the one wanted in Windows’ own spelling and order, and not with another entry, without protection, or unreadable', () => {
  const folder = privateSddl(ANA, true)
  expect(sameSddl(folder, folder)).toBe(true)
  expect(sameSddl(`D:PAI(A;OICI;FA;;;SY)(A;OICI;FA;;;${ANA})`, folder)).toBe(true)
  expect(sameSddl(`d:p(a;oici;fa;;;${ANA.toLowerCase()})(a;oici;fa;;;sy)`, folder)).toBe(true)
  // Everyone may read (what C:\ProgramData gives), the protection lost, another user, garbage.
  expect(sameSddl(`D:P(A;OICI;FA;;;${ANA})(A;OICI;FA;;;SY)(A;OICI;0x1200a9;;;WD)`, folder)).toBe(false)
  expect(sameSddl(`D:AI(A;OICI;FA;;;${ANA})(A;OICI;FA;;;SY)`, folder)).toBe(false)
  expect(sameSddl('D:P(A;OICI;FA;;;S-1-5-21-1-2-3-1002)(A;OICI;FA;;;SY)', folder)).toBe(false)
  expect(sameSddl('', folder)).toBe(false)
  // A file made in the restricted folder inherits its entries (flag ID, list not protected).
  const file = privateSddl(ANA, false)
  expect(sameSddl(`D:AI(A;ID;FA;;;${ANA})(A;ID;FA;;;SY)`, file, true)).toBe(true)
  expect(sameSddl(`D:AI(A;ID;FA;;;${ANA})(A;ID;FA;;;SY)(A;ID;0x1200a9;;;BU)`, file, true)).toBe(false)
  expect(sameSddl(`D:AI(A;ID;FA;;;${ANA})(A;ID;FA;;;SY)`, folder)).toBe(false)
})
