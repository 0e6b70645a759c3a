#!/usr/bin/env bun
// The reelhouse command line (README.md, The executable). Wrong usage: one line, exit 2. A command
// that cannot do its work: one line, exit 1. Never a stack trace, and never the text of the
// argument parser: every mistake is said in our words, with the --help that explains it.
//
// The commands are one table: the parser, `reelhouse --help`, `reelhouse user --help` and each
// command's own --help all read it, so a flag cannot be accepted without being documented.
//
// run(argv, io) is the whole command line short of the process: it writes, reads the environment
// and resolves paths through io and resolves to the exit code. The process is a thin wrapper
// around it (the end of this file), and tests call it in their own process with an io of theirs.
import { parseArgs } from 'node:util'
import {
  type CatalogueAt,
  type DatabaseUrl,
  type Revoke,
  backup,
  groupAdd,
  groupList,
  groupPermAdd,
  groupPermRemove,
  groupRemove,
  migrateCommand,
  migrateToPostgresCommand,
  proxiesRemake,
  tokenCreate,
  tokenList,
  tokenRevoke,
  userAdd,
  userGrant,
  userGroupAdd,
  userGroupRemove,
  userList,
  userPasswd,
  userPermAdd,
  userPermRemove,
  verifyCommand,
} from './cli/commands.ts'
import { type Io, processIo } from './cli/io.ts'
import { UsageError, dataDirOf, serveConfig } from './config.ts'
import { CODENAMES, type Codename, SUGGESTED_GROUPS, UserError, isCodename } from './modules/users/service.ts'
import { VERSION, versionLine } from './version.ts'

type Values = Record<string, string | boolean | string[] | undefined>
type Option = { type: 'string' | 'boolean'; multiple?: boolean; arg?: string; about: string }
type Command = {
  /** The words that name it: "user perm add". */
  name: string
  /** What follows the name in the synopsis. */
  synopsis: string
  about: string
  /** More lines for its --help. */
  details?: string
  options: Record<string, Option>
  /** The positional arguments: their names for messages, and how many are allowed. */
  args: { names: string; min: number; max: number }
  /**
   * A promise when the command waits for something (user passwd reads its input, serve its stop).
   * A number is the exit code of a command that ends well but has something to say by it (verify).
   */
  run(values: Values, positionals: string[], at: CatalogueAt, io: Io): void | number | Promise<void | number>
}

/**
 * The PostgreSQL catalogue, for every command that works on a catalogue (all but verify, which
 * reads none): the same flag and variable everywhere, so that a facility sets it once.
 */
const DATABASE: Option = {
  type: 'string',
  arg: 'URL',
  about: 'the PostgreSQL catalogue at URL instead of the SQLite one in --data (default: $REELHOUSE_DATABASE)',
}

const DATA: Option = {
  type: 'string',
  arg: 'DIR',
  about: "the data folder (default: $REELHOUSE_DATA, else the platform's); may come anywhere among the words",
}
const none = { names: '', min: 0, max: 0 }
const one = (names: string) => ({ names, min: 1, max: 1 })

function codename(value: string, command: string): Codename {
  if (!isCodename(value))
    throw new UsageError(`unknown codename "${value}"; reelhouse user --help lists them (for ${command})`)
  return value
}

/** Exactly one of the three. A key's id is unique across users, so --id needs no --user beside it. */
function revokeWhat(key: string | undefined, id: string | undefined, user: string | undefined): Revoke {
  const see = 'see reelhouse token revoke --help'
  if ([key, id, user].filter((v) => v !== undefined).length !== 1)
    throw new UsageError(`token revoke takes one of KEY, --id N and --user NAME; ${see}`)
  if (key !== undefined) return { key }
  if (user !== undefined) return { user }
  if (!/^[1-9]\d{0,15}$/.test(id!))
    throw new UsageError(`--id must be a key's id as token list shows it, not "${id}"; ${see}`)
  return { id: Number(id) }
}

const COMMANDS: Command[] = [
  {
    name: 'serve',
    synopsis:
      '[--host 127.0.0.1] [--port 8000] [--task-concurrency N] [--ffmpeg DIR]\n                  [--poll] [--poll-interval SECONDS] [--rescan-interval SECONDS] [--settle SECONDS]\n                  [--public-url URL] [--allow-origin ORIGIN]... [--allow-host NAME]...\n                  [--default-api-version 1|2] [--quiet] [--log-format text|json]',
    about: 'run the service; makes the data folder and catalogue if there are none',
    details: `On a catalogue without users it creates the superuser admin, prints its key once on stdout
and keeps it in DIR/admin.token. Logs go to stderr, one line per event and per request;
its first line (starting) and the serving line name the data= folder. Refuses a folder another
serve uses, then checks that the port is free, before it creates anything. SIGINT or SIGTERM
stop it cleanly.

With --database URL (or REELHOUSE_DATABASE) the catalogue is the PostgreSQL one at URL, migrated
as it starts; the data folder keeps what the server writes itself (proxies, pictures, admin.token).

Environment: REELHOUSE_DATA, REELHOUSE_DATABASE, REELHOUSE_HOST, REELHOUSE_PORT, REELHOUSE_TASK_CONCURRENCY,
REELHOUSE_LOG_FORMAT, REELHOUSE_PUBLIC_URL, REELHOUSE_ALLOW_ORIGIN and REELHOUSE_ALLOW_HOST
(comma-separated), REELHOUSE_DEFAULT_API_VERSION; flags win, and an empty variable counts as
unset.`,
    options: {
      host: {
        type: 'string',
        arg: 'HOST',
        about: 'address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)',
      },
      port: { type: 'string', arg: 'PORT', about: 'port to listen on (default 8000; 0 picks a free one)' },
      'task-concurrency': { type: 'string', arg: 'N', about: 'copy and delete tasks run at once (default 2)' },
      ffmpeg: { type: 'string', arg: 'DIR', about: 'folder holding ffmpeg and ffprobe (default: PATH)' },
      poll: { type: 'boolean', about: 'poll every device instead of using file system events' },
      'poll-interval': { type: 'string', arg: 'SECONDS', about: 'time between two polls of a device (default 10)' },
      'rescan-interval': {
        type: 'string',
        arg: 'SECONDS',
        about: 'time between two full scans of the devices (default 3600; 0: never)',
      },
      settle: {
        type: 'string',
        arg: 'SECONDS',
        about: 'a dropped file must stay unchanged this long before it is imported (default 2)',
      },
      quiet: { type: 'boolean', about: 'no log line per request (events and errors are still logged)' },
      'log-format': {
        type: 'string',
        arg: 'text|json',
        about: 'text (default): time level message key=value...; json: one object per line',
      },
      'public-url': {
        type: 'string',
        arg: 'URL',
        about:
          'where clients reach the service through a proxy; the API root and Link URLs use it (default: http://HOST)',
      },
      'allow-origin': {
        type: 'string',
        multiple: true,
        arg: 'ORIGIN',
        about: 'let browser pages of this origin (https://panel.example:8443) call the API (CORS); repeatable',
      },
      'allow-host': {
        type: 'string',
        multiple: true,
        arg: 'NAME',
        about:
          "on loopback, answer requests naming this host too (beside localhost and this machine's names); repeatable",
      },
      'default-api-version': {
        type: 'string',
        arg: '1|2',
        about:
          'API version of requests whose Accept names none (default 1; 2: productions name their devices by id, as the medialoopster Python client expects)',
      },
    },
    args: none,
    // Logs on the process's stderr and stops on its signals, whatever io is: a serve is a process.
    // The server (the HTTP app, the watcher, the task handlers) is loaded only for serve: the
    // other commands start on half the CPU without it (0.2 against 0.4 s from source;
    // docs/benchmarks.md, "The test suite on a clean clone").
    run: async (values, _, __, io) => {
      const config = serveConfig(values as Record<string, string | string[] | boolean | undefined>, io.env, io.cwd)
      const { serve, servePostgres } = await import('./cli/serve.ts')
      return config.database ? (await servePostgres(config)).stopped : serve(config).stopped
    },
  },
  {
    name: 'user add',
    synopsis: 'NAME [--superuser] [--perm CODENAME]... [--group NAME]...',
    about: 'add a user',
    details: 'A group must exist first (reelhouse group add); a misspelt one adds no user.',
    options: {
      superuser: { type: 'boolean', about: 'may do everything' },
      perm: {
        type: 'string',
        multiple: true,
        arg: 'CODENAME',
        about: 'a permission, repeatable (reelhouse user --help lists them)',
      },
      group: {
        type: 'string',
        multiple: true,
        arg: 'NAME',
        about: 'a group whose permissions the user gets, repeatable (reelhouse group list shows them)',
      },
    },
    args: one('NAME'),
    run: (values, [name], at, io) =>
      userAdd(
        io,
        at,
        name!,
        values.superuser === true,
        ((values.perm as string[] | undefined) ?? []).map((p) => codename(p, 'user add')),
        (values.group as string[] | undefined) ?? [],
      ),
  },
  {
    name: 'user grant',
    synopsis: 'NAME --production NAME_OR_ID (--read | --write)',
    about: "give a user access to a production's records and folders (write implies read)",
    options: {
      production: { type: 'string', arg: 'NAME_OR_ID', about: 'the production, by name or id' },
      read: { type: 'boolean', about: 'read access' },
      write: { type: 'boolean', about: 'write access' },
    },
    args: one('NAME'),
    run: (values, [name], at, io) => {
      if (typeof values.production !== 'string')
        throw new UsageError('user grant needs --production NAME_OR_ID; see reelhouse user grant --help')
      if (!!values.read === !!values.write)
        throw new UsageError('user grant needs exactly one of --read and --write; see reelhouse user grant --help')
      return userGrant(io, at, name!, values.production, values.write ? 'write' : 'read')
    },
  },
  {
    name: 'user list',
    synopsis: '',
    about: 'every user with their permissions and production access',
    options: {},
    args: none,
    run: (_, __, at, io) => userList(io, at),
  },
  {
    name: 'user perm add',
    synopsis: 'NAME CODENAME',
    about: 'give a user a permission',
    options: {},
    args: { names: 'NAME and CODENAME', min: 2, max: 2 },
    run: (_, [name, perm], at, io) => userPermAdd(io, at, name!, codename(perm!, 'user perm add')),
  },
  {
    name: 'user perm remove',
    synopsis: 'NAME CODENAME',
    about: 'take a permission away from a user',
    details: 'Any codename the user has, also one that is no longer in the list (user list shows them).',
    options: {},
    args: { names: 'NAME and CODENAME', min: 2, max: 2 },
    run: (_, [name, perm], at, io) => userPermRemove(io, at, name!, perm!),
  },
  {
    name: 'user group add',
    synopsis: 'NAME GROUP',
    about: 'put a user in a group',
    options: {},
    args: { names: 'NAME and GROUP', min: 2, max: 2 },
    run: (_, [name, group], at, io) => userGroupAdd(io, at, name!, group!),
  },
  {
    name: 'user group remove',
    synopsis: 'NAME GROUP',
    about: 'take a user out of a group',
    options: {},
    args: { names: 'NAME and GROUP', min: 2, max: 2 },
    run: (_, [name, group], at, io) => userGroupRemove(io, at, name!, group!),
  },
  {
    name: 'user passwd',
    synopsis: 'NAME [--clear]',
    about: 'set the password a user logs in with over HTTP Basic (beside their keys), or remove it',
    details: `From a terminal the password is asked for twice and not shown, and the arrows and backspace
edit it as they do any line; otherwise the first line of standard input is taken
(printf '%s\\n' "$PW" | reelhouse user passwd NAME). It is never printed; only its Argon2id hash
is kept. A running serve takes the new password from the next request.
Clients send "Authorization: Basic base64(NAME:PASSWORD)" (curl -u NAME:PASSWORD).`,
    options: { clear: { type: 'boolean', about: 'remove the password: Basic then takes only a key of the user' } },
    args: one('NAME'),
    run: (values, [name], at, io) => userPasswd(io, at, name!, values.clear === true),
  },
  {
    name: 'group add',
    synopsis: 'NAME [--perm CODENAME]...',
    about: 'add a group of users (a role) with the permissions its members get',
    details: `Without --perm, a suggested role's name gives the group that role's permissions
(listed by reelhouse group --help); any other name makes a group without any. A device's
write_permission_groups names groups whose members may copy projects onto it.`,
    options: {
      perm: {
        type: 'string',
        multiple: true,
        arg: 'CODENAME',
        about: 'a permission, repeatable (reelhouse user --help lists them)',
      },
    },
    args: one('NAME'),
    run: (values, [name], at, io) =>
      groupAdd(
        io,
        at,
        name!,
        ((values.perm as string[] | undefined) ?? []).map((p) => codename(p, 'group add')),
      ),
  },
  {
    name: 'group list',
    synopsis: '',
    about: 'every group with its permissions and members',
    options: {},
    args: none,
    run: (_, __, at, io) => groupList(io, at),
  },
  {
    name: 'group remove',
    synopsis: 'NAME',
    about: 'remove a group: its members lose its permissions, devices naming it let them write no more',
    options: {},
    args: one('NAME'),
    run: (_, [name], at, io) => groupRemove(io, at, name!),
  },
  {
    name: 'group perm add',
    synopsis: 'NAME CODENAME',
    about: 'give a group a permission',
    options: {},
    args: { names: 'NAME and CODENAME', min: 2, max: 2 },
    run: (_, [name, perm], at, io) => groupPermAdd(io, at, name!, codename(perm!, 'group perm add')),
  },
  {
    name: 'group perm remove',
    synopsis: 'NAME CODENAME',
    about: 'take a permission away from a group',
    details: 'Any codename the group has, also one that is no longer in the list (group list shows them).',
    options: {},
    args: { names: 'NAME and CODENAME', min: 2, max: 2 },
    run: (_, [name, perm], at, io) => groupPermRemove(io, at, name!, perm!),
  },
  {
    name: 'token create',
    synopsis: 'NAME',
    about: 'make a key for a user; prints the key alone on stdout (shown once)',
    details:
      'Send it as "Authorization: Token KEY". Everything else this command says goes to stderr,\nso that KEY=$(reelhouse token create NAME) holds the key alone.',
    options: {},
    args: one('NAME'),
    run: (_, [name], at, io) => tokenCreate(io, at, name!),
  },
  {
    name: 'token list',
    synopsis: 'NAME',
    about: "a user's keys: id, creation time and the key's first 8 characters (never the key)",
    details:
      "Only a hash of each key and its first 8 characters are kept, so the key itself cannot be shown.\nA key made before they were kept shows its SHA-256's first characters instead\n(printf %s KEY | sha256sum | cut -c1-8).",
    options: {},
    args: one('NAME'),
    run: (_, [name], at, io) => tokenList(io, at, name!),
  },
  {
    name: 'token revoke',
    synopsis: 'KEY | --id N | --user NAME',
    about:
      'revoke one key (the key, or its id as token list shows it), or every key of a user; takes effect on the next request',
    details: `--id spares typing the key itself where ps and the shell's history would keep it. Ids are
unique across users; the command says whose key it revoked.`,
    options: {
      id: { type: 'string', arg: 'N', about: "revoke the key with this id (token list NAME shows a user's keys)" },
      user: { type: 'string', arg: 'NAME', about: 'revoke every key of this user' },
    },
    args: { names: 'KEY', min: 0, max: 1 },
    run: (values, [key], at, io) =>
      tokenRevoke(io, at, revokeWhat(key, values.id as string | undefined, values.user as string | undefined)),
  },
  {
    name: 'proxies remake',
    synopsis: '--production NAME_OR_ID [--profile NAME]',
    about: "make the proxies of a production's assets again, one task per asset",
    details: `Queues a proxy task for every asset of the production that has a file in production, with the
transcoding profile that applies to it (its device's, else the default profile, else the
built-in default) or the one --profile names. A running serve takes them within a second and
makes as many at once as its --task-concurrency; without one, the next serve start does. Each
new proxy replaces the old one only when complete; GET /api/tasks/?kind=proxy follows them.`,
    options: {
      production: { type: 'string', arg: 'NAME_OR_ID', about: 'the production, by name or id' },
      profile: {
        type: 'string',
        arg: 'NAME',
        about: 'the transcoding profile to use, by name (default: the one that applies to each asset)',
      },
    },
    args: none,
    run: (values, _, at, io) => {
      if (typeof values.production !== 'string')
        throw new UsageError('proxies remake needs --production NAME_OR_ID; see reelhouse proxies remake --help')
      return proxiesRemake(io, at, values.production, values.profile as string | undefined)
    },
  },
  {
    name: 'migrate',
    synopsis: '[--database URL]',
    about: 'apply migrations and exit; makes the data folder and catalogue if there are none',
    details: `With --database URL, or REELHOUSE_DATABASE when the flag is absent, the PostgreSQL catalogue at
URL is migrated instead, and the data folder is not used: postgres://USER[:PASSWORD]@HOST[:PORT]/DB
(or postgresql://), where a host parameter naming a folder (?host=/run/postgresql) reaches the
server by its Unix socket. The database must exist. Starters side by side are safe: each waits
for the one applying migrations, then finds them applied. A URL of another kind, or a server that
cannot be reached or refuses the connection, is one line naming where and what the server said
(never the password), exit 2. serve --database migrates as it starts; every other command takes
--database (or REELHOUSE_DATABASE) too.`,
    options: {
      database: {
        type: 'string',
        arg: 'URL',
        about: 'migrate the PostgreSQL catalogue at URL, not the SQLite one (default: $REELHOUSE_DATABASE)',
      },
    },
    args: none,
    run: (_, __, at, io) => migrateCommand(io, at),
  },
  {
    name: 'migrate-to-postgres',
    synopsis: '--database URL',
    about: 'copy the SQLite catalogue in --data, every row with its id, into an empty PostgreSQL catalogue at URL',
    details: `URL is as for migrate --database (REELHOUSE_DATABASE when the flag is absent); the database must
exist and be empty: its migrations are applied first, and a catalogue that holds any row is
refused (exit 1), never merged into. The SQLite catalogue is read in one snapshot and written in
one PostgreSQL transaction, tables in the order of their foreign keys, ids kept, each identity set
past the highest id SQLite ever handed out; a row PostgreSQL refuses is one line naming its table,
its key and the server's reason (exit 1), and leaves the target empty. Refused while a serve uses
the data folder (stop it first: what it writes after the snapshot would not be copied). On stderr:
data=, database= and a line per table as it is copied; on stdout: copied N rows in T tables to URL.
The SQLite catalogue is left as it was (but for the migrations every command applies).`,
    options: {
      database: {
        type: 'string',
        arg: 'URL',
        about: 'the empty PostgreSQL catalogue to copy into (default: $REELHOUSE_DATABASE)',
      },
    },
    args: none,
    run: (_, __, at, io) => migrateToPostgresCommand(io, at),
  },
  {
    name: 'backup',
    synopsis: 'FILE',
    about: 'consistent copy of the catalogue, also while serving; never overwrites FILE',
    details: 'The folder of FILE must exist.',
    options: {},
    args: one('FILE'),
    run: (_, [file], at, io) => backup(io, at, file!),
  },
  {
    name: 'verify',
    synopsis: 'PATH [--record] [--progress]',
    about: 'check the files at PATH against their ASC MHL history (ascmhl/); prints what differs',
    details: `PATH is a folder with an ascmhl/ history (a project copy, a card, an archive), or a folder or file
inside one: the nearest folder at or above PATH with ascmhl/ is the history's root, and only the
files at PATH are checked. Every file is hashed (xxh64) and compared with the latest hash the
history recorded for it (histories of folders below, such as a card's, are read too). Printed on
stdout, one line per file: failed (recorded and found hashes), missing (recorded, not there), new
(there, never recorded; .DS_Store and ascmhl/ folders are left out), unverifiable (recorded with
other hash formats only) and unreadable; then a summary line with the counts.

Exit 0 when every recorded file is as recorded and none is missing (new files are listed but do
not change it); 1 when one differs, is missing or cannot be checked (as ascmhl verify exits
non-zero); 2 with one line on stderr when no check can be made (no ascmhl/ at PATH or above it,
PATH not there or not readable, a manifest or the chain malformed or changed: the line names the
file and why). Nothing is written unless --record. Needs no catalogue (--data is not used).`,
    options: {
      record: {
        type: 'boolean',
        about: "write a new generation (process in-place) of what was found; PATH must be the history's root",
      },
      progress: {
        type: 'boolean',
        about: 'files done / total on stderr, a line a second (on a terminal: always, on one line)',
      },
    },
    args: one('PATH'),
    run: (values, [path], _, io) =>
      verifyCommand(io, path!, { record: values.record === true, progress: values.progress === true }),
  },
]

/** The PostgreSQL catalogue: --database, else REELHOUSE_DATABASE (empty counts as unset). */
function databaseOf(values: Values, env: Record<string, string | undefined>): DatabaseUrl | undefined {
  if (typeof values.database === 'string') return { url: values.database, from: '--database' }
  const url = env.REELHOUSE_DATABASE
  return url ? { url, from: 'REELHOUSE_DATABASE' } : undefined
}

/** The options of a command: its own, and --database for those that work on a catalogue. */
const optionsOf = (c: Command): Record<string, Option> =>
  c.name === 'verify' || 'database' in c.options ? c.options : { ...c.options, database: DATABASE }

/** Words that group commands: "user", "token", "user perm". */
const GROUPS = new Set(
  COMMANDS.flatMap((c) =>
    c.name
      .split(' ')
      .slice(0, -1)
      .map((_, i, words) => words.slice(0, i + 1).join(' ')),
  ),
)

const line = (c: Command) => `reelhouse ${c.name}${c.synopsis ? ' ' + c.synopsis : ''}`
const synopses = (commands: Command[]) => commands.map((c) => `  ${line(c)}\n      ${c.about}`).join('\n')
// One column as wide as the longest codename and two spaces, so that a name never runs into its text.
const codenames = () => {
  const width = Math.max(...Object.keys(CODENAMES).map((k) => k.length)) + 2
  return Object.entries(CODENAMES)
    .map(([k, v]) => `  ${k.padEnd(width)}${v}`)
    .join('\n')
}

const suggestions = () =>
  Object.entries(SUGGESTED_GROUPS)
    .map(([name, s]) => `  ${name}: ${s.about}\n    ${s.perms.join(', ')}`)
    .join('\n')

export const HELP = `reelhouse ${VERSION}: media asset manager

Usage: reelhouse [--data DIR] COMMAND [ARGS...]

${synopses(COMMANDS)}
  reelhouse --version | --help

Every command takes --data DIR anywhere among its words (default: $REELHOUSE_DATA, else the
platform's data folder) and prints the data= folder it uses on stderr; all but verify take
--database URL (default: $REELHOUSE_DATABASE) for a PostgreSQL catalogue instead. Only serve and migrate
make a catalogue; the other commands refuse a folder without one, but verify, which uses none.
reelhouse COMMAND --help says more about each command.`

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(group + ' '))
  const perms =
    group.startsWith('user') || group.startsWith('group')
      ? `\n\nPermission codenames (a superuser needs none):\n${codenames()}`
      : ''
  const roles =
    group === 'group' ? `\n\nSuggested roles (reelhouse group add NAME without --perm):\n${suggestions()}` : ''
  return `Usage: reelhouse [--data DIR] ${group} COMMAND [ARGS...]\n\n${synopses(commands)}${perms}${roles}\n\nreelhouse ${group} COMMAND --help says more about each.`
}

function commandHelp(c: Command): string {
  const options = Object.entries({ ...optionsOf(c), data: DATA })
    .map(([name, o]) => `  ${`--${name}${o.arg ? ' ' + o.arg : ''}`.padEnd(28)}${o.about}`)
    .join('\n')
  const perms =
    (c.name.startsWith('user') || c.name.startsWith('group')) &&
    ('perm' in c.options || c.args.names.includes('CODENAME'))
      ? `\n\nPermission codenames:\n${codenames()}`
      : ''
  const roles = c.name === 'group add' ? `\n\nSuggested roles:\n${suggestions()}` : ''
  return `Usage: ${line(c).replace('reelhouse ', 'reelhouse [--data DIR] ')}\n\n${c.about[0]!.toUpperCase()}${c.about.slice(1)}.${c.details ? `\n\n${c.details}` : ''}\n\nOptions:\n${options}${perms}${roles}`
}

/**
 * The parser of node:util in its lenient mode, for its tokens only: what it would have thrown
 * (in its own words, naming a "positional argument" and quoting "--") is said here in ours.
 */
function parse(c: Command, args: string[]) {
  // No --data here: run has taken it out wherever it was.
  const options = optionsOf(c)
  const see = `see reelhouse ${c.name} --help`
  const { tokens } = parseArgs({
    args,
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: Object.fromEntries(Object.entries(options).map(([k, o]) => [k, { type: o.type, multiple: o.multiple }])),
  })
  const values: Values = {}
  const positionals: string[] = []
  for (const t of tokens) {
    if (t.kind === 'positional') positionals.push(t.value)
    if (t.kind !== 'option') continue
    const o = Object.hasOwn(options, t.name) ? options[t.name as keyof typeof options] : undefined
    if (!o || t.rawName !== `--${t.name}`) throw new UsageError(`unknown option ${t.rawName} for ${c.name}; ${see}`)
    if (o.type === 'boolean') {
      if (t.value !== undefined) throw new UsageError(`${t.rawName} takes no value; ${see}`)
      values[t.name] = true
      continue
    }
    // "--port --quiet": the next word is another option, not this one's value.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--')))
      throw new UsageError(`${t.rawName} needs a value (${o.arg}); ${see}`)
    // `--ffmpeg ""`, a variable that expanded to nothing: resolve('') would be the current folder.
    if (t.value === '') throw new UsageError(`${t.rawName} needs a value (${o.arg}), not an empty one; ${see}`)
    if (o.multiple) ((values[t.name] as string[] | undefined) ?? (values[t.name] = [])).push(t.value)
    else if (values[t.name] !== undefined) throw new UsageError(`${t.rawName} is given twice; ${see}`)
    else values[t.name] = t.value
  }
  if (positionals.length < c.args.min) throw new UsageError(`${c.name} needs ${c.args.names}; ${see}`)
  if (positionals.length > c.args.max)
    throw new UsageError(`unexpected argument "${positionals[c.args.max]}" for ${c.name}; ${see}`)
  return { values, positionals }
}

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h'

/**
 * Takes --data DIR (or --data=DIR) out of the words wherever it is, before `--`: before the
 * command (`npm run reelhouse -- COMMAND` passes ./data, the folder `npm start` serves there),
 * between a group's words or after them. An empty value is refused, not read as the current folder.
 */
function takeData(argv: string[], env: Record<string, string | undefined>): { data?: string; args: string[] } {
  const args: string[] = []
  let data: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      args.push(...argv.slice(i))
      break
    }
    if (arg !== '--data' && !arg.startsWith('--data=')) {
      args.push(arg)
      continue
    }
    const value = arg === '--data' ? argv[++i] : arg.slice('--data='.length)
    if (value === undefined || (arg === '--data' && value.startsWith('--')))
      throw new UsageError('--data needs a value (DIR); see reelhouse --help')
    if (value === '') throw new UsageError('--data needs a value (DIR), not an empty one; see reelhouse --help')
    if (data !== undefined) throw new UsageError(givenTwice(env))
    data = value
  }
  return { data, args }
}

/** Under `npm run reelhouse` the script gave the first --data, not the user: say so, and what to do instead. */
function givenTwice(env: Record<string, string | undefined>): string {
  if (env.npm_lifecycle_event !== 'reelhouse') return '--data is given twice; give it once'
  const passed = env.npm_lifecycle_script?.match(/--data[= ](\S+)/)?.[1] ?? './data'
  return `--data is given twice (npm run reelhouse already passes --data ${passed}; use bun src/main.ts or the executable for another folder)`
}

/**
 * The command line: runs what `argv` (the words after the program's name) says, with the streams,
 * environment and working folder of `io`, and resolves to the exit code. Usage mistakes exit 2,
 * failures of the work exit 1; either way one line on stderr. serve resolves once it has stopped.
 */
export async function run(argv: string[], io: Io = processIo()): Promise<number> {
  try {
    return (await dispatch(argv, io)) ?? 0
  } catch (error) {
    const message =
      error instanceof UserError || error instanceof UsageError
        ? error.message
        : ((error as Error)?.message ?? String(error))
    io.stderr.write(`reelhouse: ${message.split('\n')[0]}\n`)
    return exitCodeOf(error)
  }
}

function dispatch(argv: string[], io: Io): void | number | Promise<void | number> {
  const say = (text: string) => io.stdout.write(`${text}\n`)
  const { data, args } = takeData(argv, io.env)
  const first = args[0]
  if (first === undefined || isHelp(first) || first === 'help') return say(HELP)
  if (first === '--version' || first === '-v') return say(versionLine(io.env))

  // The longest run of words naming a group, then a command.
  let words = ''
  let at = 0
  let command: Command | undefined
  while (at < args.length) {
    const next = words ? `${words} ${args[at]}` : args[at]!
    command = COMMANDS.find((c) => c.name === next)
    if (!command && !GROUPS.has(next)) break
    words = next
    at++
    if (command) break
  }
  if (!command) {
    if (!words) throw new UsageError(`unknown command "${first}"; see reelhouse --help`)
    if (isHelp(args[at])) return say(groupHelp(words))
    const wrong = args[at] === undefined ? `${words} needs a command` : `unknown command "${words} ${args[at]}"`
    throw new UsageError(`${wrong}; see reelhouse ${words} --help`)
  }
  const rest = args.slice(at)
  const end = rest.indexOf('--')
  if ((end < 0 ? rest : rest.slice(0, end)).some(isHelp)) return say(commandHelp(command))

  const { values, positionals } = parse(command, rest)
  values.data = data
  return command.run(
    values,
    positionals,
    { dataDir: dataDirOf(data, io.env, io.cwd), database: databaseOf(values, io.env) },
    io,
  )
}

/** Usage mistakes exit 2, failures of the work exit 1; either way one line on stderr. */
export const exitCodeOf = (error: unknown): number => (error instanceof UsageError ? 2 : 1)

/** The process around run(): its arguments in, its exit code out. */
export const runAsProcess = () => void run(process.argv.slice(2)).then((code) => (process.exitCode = code))

if (import.meta.main) runAsProcess()
