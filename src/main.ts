#!/usr/bin/env bun
// The reelhouse command line (service.md section 2). Wrong usage: one line, exit 2. A command
// that cannot do its work: one line, exit 1. Never a stack trace.
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { backup, migrateCommand, tokenCreate, tokenRevoke, userAdd, userGrant } from './cli/commands.ts'
import { serve } from './cli/serve.ts'
import { UsageError, dataDirOf, serveConfig } from './config.ts'
import { UserError } from './modules/users/service.ts'
import { VERSION } from './version.ts'

export const HELP = `reelhouse ${VERSION}: media asset manager

Usage:
  reelhouse serve   [--host 127.0.0.1] [--port 8000] [--task-concurrency N] [--ffmpeg DIR]
                    [--poll] [--poll-interval SECONDS] [--rescan-interval SECONDS] [--settle SECONDS]
  reelhouse user add NAME [--superuser] [--perm CODENAME]...
  reelhouse user grant NAME --production NAME_OR_ID (--read | --write)
  reelhouse token create NAME        prints the new key alone on stdout
  reelhouse token revoke KEY         or: --user NAME, revokes all of that user's keys
  reelhouse migrate                  apply migrations and exit
  reelhouse backup FILE              consistent copy of the database while serving
  reelhouse --version | --help

Every command takes --data DIR (default: $REELHOUSE_DATA, else the platform's data folder).
serve also reads REELHOUSE_HOST and REELHOUSE_PORT; flags win.`

type Spec = NonNullable<ParseArgsConfig['options']>

function parse(args: string[], options: Spec, positionals: number) {
  const parsed = parseArgs({ args, options: { data: { type: 'string' }, ...options }, allowPositionals: true, strict: true })
  if (parsed.positionals.length !== positionals)
    throw new UsageError(`expected ${positionals} argument(s), got ${parsed.positionals.length}; see reelhouse --help`)
  return { values: parsed.values as Record<string, string | boolean | string[] | undefined>, positionals: parsed.positionals }
}

export function run(argv: string[]): void {
  const [command, sub, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return void console.log(HELP)
  if (command === '--version' || command === '-v') return void console.log(VERSION)
  const data = (v: Record<string, unknown>) => dataDirOf(v.data as string | undefined)

  switch (command) {
    case 'serve': {
      const { values } = parse(argv.slice(1), {
        host: { type: 'string' }, port: { type: 'string' }, poll: { type: 'boolean' },
        'poll-interval': { type: 'string' }, 'rescan-interval': { type: 'string' }, 'task-concurrency': { type: 'string' },
        ffmpeg: { type: 'string' }, settle: { type: 'string' },
      }, 0)
      serve(serveConfig(values as Record<string, string | boolean | undefined>))
      return
    }
    case 'user': {
      if (sub === 'add') {
        const { values, positionals } = parse(rest, { superuser: { type: 'boolean' }, perm: { type: 'string', multiple: true } }, 1)
        return userAdd(data(values), positionals[0]!, values.superuser === true, (values.perm as string[] | undefined) ?? [])
      }
      if (sub === 'grant') {
        const { values, positionals } = parse(rest, { production: { type: 'string' }, read: { type: 'boolean' }, write: { type: 'boolean' } }, 1)
        if (typeof values.production !== 'string') throw new UsageError('user grant needs --production NAME_OR_ID')
        if (!!values.read === !!values.write) throw new UsageError('user grant needs exactly one of --read and --write')
        return userGrant(data(values), positionals[0]!, values.production, values.write ? 'write' : 'read')
      }
      throw new UsageError(`unknown command "user ${sub ?? ''}"; use user add or user grant`)
    }
    case 'token': {
      if (sub === 'create') {
        const { values, positionals } = parse(rest, {}, 1)
        return tokenCreate(data(values), positionals[0]!)
      }
      if (sub === 'revoke') {
        const args = parseArgs({ args: rest, options: { data: { type: 'string' }, user: { type: 'string' } }, allowPositionals: true, strict: true })
        if (args.positionals.length > 1) throw new UsageError('token revoke takes one KEY')
        return tokenRevoke(data(args.values), args.positionals[0], args.values.user)
      }
      throw new UsageError(`unknown command "token ${sub ?? ''}"; use token create or token revoke`)
    }
    case 'migrate': {
      const { values } = parse(argv.slice(1), {}, 0)
      return migrateCommand(data(values))
    }
    case 'backup': {
      const { values, positionals } = parse(argv.slice(1), {}, 1)
      return backup(data(values), positionals[0]!)
    }
    default:
      throw new UsageError(`unknown command "${command}"; see reelhouse --help`)
  }
}

/** Usage mistakes exit 2, failures of the work exit 1; either way one line on stderr. */
export function exitCodeOf(error: unknown): number {
  const e = error as { code?: string }
  const usage = error instanceof UsageError || (typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS'))
  return usage ? 2 : 1
}

if (import.meta.main) {
  try {
    run(process.argv.slice(2))
  } catch (error) {
    const message = error instanceof UserError || error instanceof UsageError ? error.message : (error as Error)?.message ?? String(error)
    process.stderr.write(`reelhouse: ${message.split('\n')[0]}\n`)
    process.exitCode = exitCodeOf(error)
  }
}
