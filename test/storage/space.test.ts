// Why a device's folder is missing (src/storage/space.ts): on Windows a drive letter that is not
// there is named, and under a service (session 0, where drive letters mapped in a user's logon do
// not exist) the status says to use the share's UNC path. The Windows executable gives the
// first of these for a real missing drive under Wine (test/cli/windows.test.ts); Wine runs its
// programs in session 1, so the service's sentence is shown here.
import { expect, test } from 'bun:test'
import { missingText } from '../../src/storage/space.ts'
import { onNetworkShare } from '../../src/storage/windows/drives.ts'

test('a missing folder, a missing drive letter, and a missing drive letter under a service', () => {
  expect(missingText('/mnt/media/', { driveThere: true, service: false })).toBe(
    'the folder is missing (a disk or share not mounted?)',
  )
  expect(missingText('C:\\media\\', { driveThere: true, service: true })).toBe(
    'the folder is missing (a disk or share not mounted?)',
  )
  expect(missingText('\\\\nas\\media\\', { driveThere: true, service: true })).toBe(
    'the folder is missing (a disk or share not mounted?)',
  )
  expect(missingText('m:\\media\\', { driveThere: false, service: false })).toBe(
    'the drive M: is not there (a disk not connected, or a network drive not mapped?)',
  )
  expect(missingText('M:\\media\\', { driveThere: false, service: true })).toBe(
    "the drive M: is not there: a Windows service does not see drive letters mapped in a user's logon (net use, Map network drive); give the device the share's UNC path (\\\\server\\share\\...) instead",
  )
})

test('a network share on Windows, for the watcher (which polls it): a UNC path; nothing off Windows', () => {
  expect(onNetworkShare('\\\\nas\\media\\', 'win32')).toBe(true)
  expect(onNetworkShare('//nas/media/', 'win32')).toBe(true)
  expect(onNetworkShare('\\\\nas\\media\\', 'linux')).toBe(false)
  expect(onNetworkShare('/mnt/media/', 'linux')).toBe(false)
})
