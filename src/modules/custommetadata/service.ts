import { eq, max } from 'drizzle-orm'
import { RE2JS } from 're2js'
import type { Db } from '../../db/client.ts'
import { contentTypes, customMetadata, customMetadataSets } from '../../db/schema.ts'

export { CONTENT_TYPE_IDS } from '../../db/schema.ts'
import { AppError, entry, invalid } from '../../http/errors.ts'


/**
 * Validation rules run on RE2 (re2js, pure JavaScript), which matches in time linear in the value
 * (issue 10, point 7): JavaScript's backtracking RegExp took half a second for ^(a+)+$ on 37
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
 * caption or a note, and a 900,000-character value (issue 25) is stored in, and sent with, every
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
  return size > MAX_RULE_INSTRUCTIONS ? `the rule compiles to ${size} instructions, more than ${MAX_RULE_INSTRUCTIONS}` : re
}

const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

export function createCustomMetadata(db: Db) {
  const fieldsOf = db.$client.query<{ key: string; validation_rule: string | null }, [number]>(
    'SELECT m.key, m.validation_rule FROM custom_metadata m JOIN custom_metadata_sets s ON s.id = m.custom_metadata_set WHERE s.content_type = ?',
  )
  // Compiled once per stored rule, not per value and request (compiling costs more than matching).
  const rules = new Map<string, RE2JS | string>()
  const ruleOf = (rule: string) => {
    let re = rules.get(rule)
    if (re === undefined) rules.set(rule, (re = compileRule(rule)))
    return re
  }
  return {
    createSet(body: { name: string; description: string; content_type: number }) {
      if (!db.select().from(contentTypes).where(eq(contentTypes.id, body.content_type)).get())
        throw invalid('/content_type', 'No content type with this id (1 projectasset, 2 audioasset, 3 imageasset, 4 videoasset).')
      return db.insert(customMetadataSets).values(body).returning().get()
    },

    createField(body: { key: string; value: string; custom_metadata_set: number; order?: number; validation_rule?: string | null }) {
      if (!db.select().from(customMetadataSets).where(eq(customMetadataSets.id, body.custom_metadata_set)).get())
        throw invalid('/custom_metadata_set', 'No custom metadata set with this id.')
      if (body.validation_rule != null) {
        const rule = compileRule(body.validation_rule)
        if (typeof rule === 'string') throw invalid('/validation_rule', `Not a regular expression RE2 can run: ${rule}.`)
      }
      return db.transaction((tx) => {
        const order =
          body.order ??
          (tx.select({ m: max(customMetadata.order) }).from(customMetadata)
            .where(eq(customMetadata.custom_metadata_set, body.custom_metadata_set)).get()?.m ?? 0) + 1
        return tx.insert(customMetadata).values({ ...body, order, validation_rule: body.validation_rule ?? null }).returning().get()
      })
    },

    /**
     * Every key must be a field of a set attached to the content type, and every value must
     * match the field's rule. All failures are reported at once, at `base`/<key>.
     */
    validateStore(contentType: number, store: Record<string, unknown>, base: string) {
      const keys = Object.keys(store)
      if (keys.length === 0) return
      const fields = new Map(fieldsOf.all(contentType).map((f) => [f.key, f.validation_rule]))
      const failures = []
      for (const key of keys) {
        const pointer = `${base}/${pointerKey(key)}`
        const value = store[key]
        if (!fields.has(key)) {
          failures.push(entry(400, 'invalid', `"${key}" is not a custom metadata field of this kind of asset.`, { pointer }))
          continue
        }
        if (value !== null && typeof value === 'object') {
          failures.push(entry(400, 'invalid', 'A custom metadata value is a string, number or boolean.', { pointer }))
          continue
        }
        // Counted only past the length where a value could be too long (a character is 1 to 3 bytes).
        if (typeof value === 'string' && value.length > MAX_VALUE_BYTES / 3 && Buffer.byteLength(value) > MAX_VALUE_BYTES) {
          failures.push(entry(400, 'invalid', `A custom metadata value has at most ${MAX_VALUE_BYTES.toLocaleString('en-US')} bytes (64 KiB) as UTF-8.`, { pointer }))
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
  if (value.length > MAX_CHECKED_LENGTH) return `A value checked against a rule has at most ${MAX_CHECKED_LENGTH} characters.`
  if (!re.test(value)) return `The value does not match the field's rule ${rule}.`
  return undefined
}
