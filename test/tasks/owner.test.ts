// The tasks table is read and written only under src/tasks/ (the runner, and tasks/queries.ts for
// what features ask of the queue): a feature that needs to know something of the queue asks there,
// by what it wants to know, so that the queue's SQL and its columns' JSON stay in one place.
// src/db/ (the schema and the migrations) is where the table is made. This names each line
// elsewhere that reaches into the table.
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../helpers/process.ts'

const OWNERS = ['src/tasks/', 'src/db/']

/** Statements of drizzle or SQL that read or write the table. */
const USES = ['FROM tasks', 'from(tasks)', 'insert(tasks)', 'update(tasks)']
/** A json_extract over the table's JSON columns. */
const TASK_COLUMNS = ['tasks.target', 'tasks.params', "params, '$"]
/** An import from the schema (one or more lines), its names between the braces. */
const SCHEMA_IMPORT = /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*['"][^'"]*\/db\/schema(?:\.ts)?['"]/g

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

function offences(path: string, text: string): string[] {
  const found: string[] = []
  for (const m of text.matchAll(SCHEMA_IMPORT)) {
    const names = m[1]!
    const name = /(?:^|[\s,])(?:type\s+)?tasks(?=\s*(?:,|$|\bas\b))/.exec(names)
    if (!name) continue
    const at = m.index! + m[0].indexOf('{') + 1 + name.index + name[0].lastIndexOf('tasks')
    found.push(`${path}:${lineAt(text, at)}: imports tasks`)
  }
  text.split('\n').forEach((line, i) => {
    for (const use of USES) if (line.includes(use)) found.push(`${path}:${i + 1}: ${use}`)
    if (line.includes('json_extract(') && TASK_COLUMNS.some((c) => line.includes(c)))
      found.push(`${path}:${i + 1}: json_extract over the tasks columns`)
  })
  return found
}

test('no file under src/ outside src/tasks/ (and src/db/) reads or writes the tasks table', () => {
  const files = [...new Bun.Glob('src/**/*.{ts,tsx}').scanSync({ cwd: ROOT })]
    .map((f) => f.split('\\').join('/'))
    .filter((f) => !OWNERS.some((o) => f.startsWith(o)))
  expect(files.length).toBeGreaterThan(50)
  const found = files.sort().flatMap((f) => offences(f, readFileSync(join(ROOT, f), 'utf8')))
  expect(found).toEqual([])
})

test('the guard sees each way in', () => {
  const sample = [
    "import { devices, tasks } from '../../db/schema.ts'",
    'import {',
    '  type TaskTarget,',
    '  tasks,',
    "} from '../db/schema'",
    "db.select().from(tasks).where(sql`json_extract(${tasks.target}, '$.device') = 1`)",
    "db.$client.query(`SELECT id FROM tasks WHERE json_extract(params, '$.asset') = ?`)",
    'db.insert(tasks).values(row)',
    'db.update(tasks).set(row)',
    "import { taskState } from '../../tasks/queries.ts'",
    "import { mediaAssets } from '../../db/schema.ts'",
  ].join('\n')
  expect(offences('x.ts', sample)).toEqual([
    'x.ts:1: imports tasks',
    'x.ts:4: imports tasks',
    'x.ts:6: from(tasks)',
    'x.ts:6: json_extract over the tasks columns',
    'x.ts:7: FROM tasks',
    'x.ts:7: json_extract over the tasks columns',
    'x.ts:8: insert(tasks)',
    'x.ts:9: update(tasks)',
  ])
})
