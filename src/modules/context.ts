import type { Db } from '../db/client.ts'
import type { authPlugin } from '../http/auth.ts'
import type { List } from '../http/lists.ts'
import type { Runner } from '../tasks/runner.ts'
import type { Users } from './users/service.ts'

/** What every HTTP module is built from (see app.ts). */
export type ModuleContext = {
  db: Db
  users: Users
  list: List
  auth: ReturnType<typeof authPlugin>
  runner: Runner
}
