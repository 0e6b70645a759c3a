// Who asks: the user a key, password or session stands for, with what they may do. Its own
// file, importing nothing, so that everything that only names it (the HTTP layer, history, the
// password check and the sessions, which the users service itself builds on) depends on no service.

export type Principal = {
  id: number
  username: string
  is_superuser: boolean
  /** The user's own codenames and those of every group they are in. */
  perms: ReadonlySet<string>
  /** The names of the groups the user is in (a device's write_permission_groups names them). */
  groups: ReadonlySet<string>
  /** Productions the user may read (write implies read); ignored for superusers. */
  readable: ReadonlySet<number>
  writable: ReadonlySet<number>
}
