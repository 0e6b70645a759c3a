import { and, eq, max, ne, sql } from 'drizzle-orm'
import { RE2JS } from 're2js'
import type { Db } from '../../db/client.ts'
import { type Work, all, allOf, one, run, statement, tx } from '../../db/port.ts'
import {
  CONTENT_TYPE_IDS,
  CONTENT_TYPE_NAMES,
  contentTypes,
  customMetadata,
  customMetadataSets,
} from '../../db/tables.ts'

export { CONTENT_TYPE_IDS } from '../../db/tables.ts'
import { overlay, refuseReadOnly } from '../../http/edit.ts'
import { AppError, entry, invalid, noSuchRecord, notFound, unique } from '../../http/errors.ts'
import { actorOf, historyOf } from '../history/service.ts'
import { requirePerm } from '../users/access.ts'
import type { Principal } from '../users/service.ts'

type FieldRow = typeof customMetadata.$inferSelect
type SetRow = typeof customMetadataSets.$inferSelect
const FIELD_FIELDS = ['key', 'value', 'order', 'custom_metadata_set', 'validation_rule'] as const
const SET_FIELDS = ['name', 'description', 'content_type'] as const
const conflict = (detail: string) => new AppError(409, 'conflict', detail)

/**
 * Validation rules run on RE2 (re2js, pure JavaScript), which matches in time linear in the value
 * JavaScript's backtracking RegExp took half a second for ^(a+)+$ on 37
 * characters, doubling with each more. Linear still means the value's length times the size of
 * the compiled rule when RE2 cannot use its DFA (10 to 40 ns per character and instruction: the
 * 13 characters (a|aa){1000}$ took 7 s on 100,000 characters, .*a.{990}$ 0.15 s on 4,096), so both
 * are bounded: rules to 1,000 instructions, values checked against a rule to 1,024 characters,
 * some 50 ms at worst and microseconds for ordinary rules.
 */
export const MAX_RULE_INSTRUCTIONS = 1000
export const MAX_CHECKED_LENGTH = 1024

/**
 * The most a custom metadata value holds, in bytes of its UTF-8 text (64 KiB): a field is a
 * caption or a note, and a 900,000-character value (a review's test) is stored in, and sent with, every
 * answer that shows the record.
 */
export const MAX_VALUE_BYTES = 64 * 1024

/** The rule compiled, or why RE2 cannot run it (syntax it lacks, such as backreferences, or size). */
export function compileRule(rule: string): RE2JS | string {
  let re: RE2JS
  try {
    re = RE2JS.compile(rule)
  } catch (error) {
    return (error as Error).message
  }
  const size: number = re.re2().prog.numInst()
  return size > MAX_RULE_INSTRUCTIONS
    ? `the rule compiles to ${size} instructions, more than ${MAX_RULE_INSTRUCTIONS}`
    : re
}

const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

export function createCustomMetadata(db: Db) {
  // Asked for every store written (validateStore): prepared once.
  const fieldsOf = statement(() =>
    db
      .select({ key: customMetadata.key, validation_rule: customMetadata.validation_rule })
      .from(customMetadata)
      .innerJoin(customMetadataSets, eq(customMetadataSets.id, customMetadata.custom_metadata_set))
      .where(eq(customMetadataSets.content_type, sql.placeholder('contentType'))),
  )
  // Compiled once per stored rule, not per value and request (compiling costs more than matching).
  const rules = new Map<string, RE2JS | string>()
  const ruleOf = (rule: string) => {
    let re = rules.get(rule)
    if (re === undefined) rules.set(rule, (re = compileRule(rule)))
    return re
  }
  const history = historyOf(db)

  function* field(id: number): Work<FieldRow> {
    const row = yield* one(db.select().from(customMetadata).where(eq(customMetadata.id, id)))
    if (!row) throw notFound(noSuchRecord('CustomMetadata'))
    return row
  }
  function* set(id: number): Work<SetRow> {
    const row = yield* one(db.select().from(customMetadataSets).where(eq(customMetadataSets.id, id)))
    if (!row) throw notFound(noSuchRecord('CustomMetadataSet'))
    return row
  }
  function* setExists(id: number, pointer = '/custom_metadata_set'): Work<SetRow> {
    const row = yield* one(db.select().from(customMetadataSets).where(eq(customMetadataSets.id, id)))
    if (!row) throw invalid(pointer, 'No custom metadata set with this id.')
    return row
  }
  function* contentTypeExists(id: number): Work<void> {
    if (!(yield* one(db.select().from(contentTypes).where(eq(contentTypes.id, id)))))
      throw invalid(
        '/content_type',
        'No content type with this id (1 projectasset, 2 audioasset, 3 imageasset, 4 videoasset).',
      )
  }
  function ruleRunnable(rule: string | null | undefined) {
    if (rule == null) return
    const compiled = compileRule(rule)
    if (typeof compiled === 'string')
      throw invalid('/validation_rule', `Not a regular expression RE2 can run: ${compiled}.`)
  }
  function* keyFree(key: string, except?: number): Work<void> {
    const taken = yield* one(
      db
        .select({ id: customMetadata.id })
        .from(customMetadata)
        .where(and(eq(customMetadata.key, key), except === undefined ? undefined : ne(customMetadata.id, except)))
        .limit(1),
    )
    if (taken) throw unique('/key', 'A custom metadata field with this key already exists.')
  }

  /**
   * The records of a content type that hold a value under `key`, in words ("4 video assets"), or
   * undefined: a field whose key, set or content type changes, or that goes, would orphan them.
   */
  function* holders(contentType: number, key: string): Work<string | undefined> {
    const name = CONTENT_TYPE_NAMES.find((n) => CONTENT_TYPE_IDS[n] === contentType)
    if (!name) return undefined
    // SQLite-only: json_each reads the keys of the meta_field_store JSON object.
    const holding = sql`EXISTS (SELECT 1 FROM json_each(meta_field_store) WHERE key = ${key})`
    const where =
      name === 'projectasset'
        ? sql`FROM project_assets WHERE ${holding}`
        : sql`FROM media_assets WHERE kind = ${name.replace('asset', '')} AND ${holding}`
    const n = (yield* one(sql<{ n: number }>`SELECT count(*) AS n ${where}`))!.n
    if (!n) return undefined
    const kind = name === 'projectasset' ? 'project' : name.replace('asset', '')
    return `${n} ${kind} asset${n === 1 ? ' holds a value' : 's hold values'} for "${key}"`
  }

  return {
    *createSet(body: { name: string; description: string; content_type: number }, user: Principal): Work<SetRow> {
      yield* contentTypeExists(body.content_type)
      return yield* tx(function* () {
        const row = (yield* one(db.insert(customMetadataSets).values(body).returning()))!
        yield* history.created(actorOf(user), { resource: 'custommetadataset', id: row.id }, row, SET_FIELDS)
        return row
      })
    },

    *createField(
      body: {
        key: string
        value: string
        custom_metadata_set: number
        order?: number
        validation_rule?: string | null
      },
      user: Principal,
    ): Work<FieldRow> {
      yield* setExists(body.custom_metadata_set)
      ruleRunnable(body.validation_rule)
      yield* keyFree(body.key)
      return yield* tx(function* () {
        const order =
          body.order ??
          ((yield* one(
            db
              .select({ m: max(customMetadata.order) })
              .from(customMetadata)
              .where(eq(customMetadata.custom_metadata_set, body.custom_metadata_set)),
          ))?.m ?? 0) + 1
        const row = (yield* one(
          db
            .insert(customMetadata)
            .values({ ...body, order, validation_rule: body.validation_rule ?? null })
            .returning(),
        ))!
        yield* history.created(actorOf(user), { resource: 'custommetadata', id: row.id }, row, FIELD_FIELDS)
        return row
      })
    },

    /**
     * A field's key, or its set for one of another content type, changes only while no record
     * holds a value under it (409): the values would be left under a key no field has. A new rule
     * applies to values written from now on.
     */
    *updateField(id: number, body: Partial<Omit<FieldRow, 'id'>> & { id?: unknown }, user: Principal): Work<FieldRow> {
      const row = yield* field(id)
      requirePerm(user, 'browser.change_custommetadata')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, FIELD_FIELDS)
      const oldType = (yield* set(row.custom_metadata_set)).content_type
      const newType =
        next.custom_metadata_set === row.custom_metadata_set
          ? oldType
          : (yield* setExists(next.custom_metadata_set)).content_type
      if (body.validation_rule !== undefined) ruleRunnable(body.validation_rule)
      if (next.key !== row.key) yield* keyFree(next.key, id)
      if (next.key !== row.key || newType !== oldType) {
        const held = yield* holders(oldType, row.key)
        if (held)
          throw conflict(
            `The key or content type of a field changes only while no record holds a value for it: ${held}.`,
          )
      }
      return yield* tx(function* () {
        const after = (yield* one(db.update(customMetadata).set(next).where(eq(customMetadata.id, id)).returning()))!
        yield* history.updated(actorOf(user), { resource: 'custommetadata', id }, row, after, FIELD_FIELDS)
        return after
      })
    },

    *removeField(id: number, user: Principal): Work<void> {
      const row = yield* field(id)
      requirePerm(user, 'browser.delete_custommetadata')
      const held = yield* holders((yield* set(row.custom_metadata_set)).content_type, row.key)
      if (held) throw conflict(`The field is in use: ${held}.`)
      yield* tx(function* () {
        yield* run(db.delete(customMetadata).where(eq(customMetadata.id, id)))
        yield* history.deleted(actorOf(user), { resource: 'custommetadata', id }, row, FIELD_FIELDS)
      })
    },

    /** A set's content type changes only while none of its fields has values stored (409). */
    *updateSet(id: number, body: Partial<Omit<SetRow, 'id'>> & { id?: unknown }, user: Principal): Work<SetRow> {
      const row = yield* set(id)
      requirePerm(user, 'browser.change_custommetadataset')
      refuseReadOnly(body, row, { id: 'id is set by the service.' })
      const next = overlay(row, body, SET_FIELDS)
      if (next.content_type !== row.content_type) {
        yield* contentTypeExists(next.content_type)
        const keys = yield* all(
          db.select({ key: customMetadata.key }).from(customMetadata).where(eq(customMetadata.custom_metadata_set, id)),
        )
        const held: string[] = []
        for (const k of keys) {
          const h = yield* holders(row.content_type, k.key)
          if (h !== undefined) held.push(h)
        }
        if (held.length)
          throw conflict(
            `The content type of a set changes only while no record holds a value for its fields: ${held.join('; ')}.`,
          )
      }
      return yield* tx(function* () {
        const after = (yield* one(
          db.update(customMetadataSets).set(next).where(eq(customMetadataSets.id, id)).returning(),
        ))!
        yield* history.updated(actorOf(user), { resource: 'custommetadataset', id }, row, after, SET_FIELDS)
        return after
      })
    },

    /** 409 while fields belong to the set. */
    *removeSet(id: number, user: Principal): Work<void> {
      const row = yield* set(id)
      requirePerm(user, 'browser.delete_custommetadataset')
      const fields = yield* all(
        db.select({ key: customMetadata.key }).from(customMetadata).where(eq(customMetadata.custom_metadata_set, id)),
      )
      if (fields.length)
        throw conflict(
          `${fields.length} custom metadata field${fields.length === 1 ? ' belongs' : 's belong'} to this set (${fields.map((f) => f.key).join(', ')}).`,
        )
      yield* tx(function* () {
        yield* run(db.delete(customMetadataSets).where(eq(customMetadataSets.id, id)))
        yield* history.deleted(actorOf(user), { resource: 'custommetadataset', id }, row, SET_FIELDS)
      })
    },

    /**
     * Every key must be a field of a set attached to the content type, and every value must
     * match the field's rule. All failures are reported at once, at `base`/<key>.
     */
    *validateStore(contentType: number, store: Record<string, unknown>, base: string): Work<void> {
      const keys = Object.keys(store)
      if (keys.length === 0) return
      const fields = new Map((yield* allOf(fieldsOf, { contentType })).map((f) => [f.key, f.validation_rule]))
      const failures = []
      for (const key of keys) {
        const pointer = `${base}/${pointerKey(key)}`
        const value = store[key]
        if (!fields.has(key)) {
          failures.push(
            entry(400, 'invalid', `"${key}" is not a custom metadata field of this kind of asset.`, { pointer }),
          )
          continue
        }
        if (value !== null && typeof value === 'object') {
          failures.push(entry(400, 'invalid', 'A custom metadata value is a string, number or boolean.', { pointer }))
          continue
        }
        // Counted only past the length where a value could be too long (a character is 1 to 3 bytes).
        if (
          typeof value === 'string' &&
          value.length > MAX_VALUE_BYTES / 3 &&
          Buffer.byteLength(value) > MAX_VALUE_BYTES
        ) {
          failures.push(
            entry(
              400,
              'invalid',
              `A custom metadata value has at most ${MAX_VALUE_BYTES.toLocaleString('en-US')} bytes (64 KiB) as UTF-8.`,
              { pointer },
            ),
          )
          continue
        }
        const rule = fields.get(key)
        const failure = rule != null && value !== null ? checkRule(ruleOf(rule), rule, String(value)) : undefined
        if (failure) failures.push(entry(400, 'invalid', failure, { pointer }))
      }
      if (failures.length) throw AppError.many(400, failures)
    },
  }
}

export type CustomMetadata = ReturnType<typeof createCustomMetadata>

/**
 * Why a value fails its field's rule, if it does. A rule is searched for, not matched whole
 * (api.md: anchor it to require a whole match). A stored rule RE2 cannot run (one saved before
 * rules were RE2) refuses every value: it was meant to restrict them.
 */
function checkRule(re: RE2JS | string, rule: string, value: string): string | undefined {
  if (typeof re === 'string') return `The field's rule ${rule} cannot be checked: ${re}.`
  if (value.length > MAX_CHECKED_LENGTH)
    return `A value checked against a rule has at most ${MAX_CHECKED_LENGTH} characters.`
  if (!re.test(value)) return `The value does not match the field's rule ${rule}.`
  return undefined
}
