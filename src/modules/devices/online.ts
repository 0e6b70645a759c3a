// The check of work that needs a device's folder there (a rescan, a project copy onto it): 409
// conflict at once while it is not, in the rescan's words, rather than a task that fails later.
import { AppError } from '../../http/errors.ts'
import { folderSpace } from '../../storage/space.ts'

/**
 * 409 conflict while the folder of `device` is not there (offline, looked at for at most 2 s),
 * saying why and what cannot be done (`consequence`, after a colon). `subject` names the device.
 */
export async function requireOnline(
  device: { path: string },
  consequence: string,
  subject = 'The device',
): Promise<void> {
  const look = await folderSpace(device.path)
  if (!look.online)
    throw new AppError(
      409,
      'conflict',
      `${subject} is offline (${look.reason}): ${consequence}. Ask again once its folder is back.`,
    )
}
