import { eq, max } from 'drizzle-orm'
import type { Db } from '../../db/client.ts'
import { contentTypes, customMetadata, customMetadataSets } from '../../db/schema.ts'
import { AppError, entry, invalid } from '../../http/errors.ts'

export const CONTENT_TYPE_IDS = { projectasset: 1, audioasset: 2, imageasset: 3, videoasset: 4 } as const

/** The rule as a RegExp, or an error naming why it is not one. */
export function compileRule(rule: string): RegExp | string {
  try {
    return new RegExp(rule, 'u')
  } catch (error) {
    return (error as Error).message
  }
}

const pointerKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

export function createCustomMetadata(db: Db) {
  const fieldsOf = db.$client.query<{ key: string; validation_rule: string | null }, [number]>(
    'SELECT m.key, m.validation_rule FROM custom_metadata m JOIN custom_metadata_sets s ON s.id = m.custom_metadata_set WHERE s.content_type = ?',
  )
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
        if (typeof rule === 'string') throw invalid('/validation_rule', `Not a valid regular expression: ${rule}`)
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
        const rule = fields.get(key)
        if (rule != null && value !== null) {
          const re = compileRule(rule)
          if (re instanceof RegExp && !re.test(String(value)))
            failures.push(entry(400, 'invalid', `The value does not match the field's rule ${rule}.`, { pointer }))
        }
      }
      if (failures.length) throw AppError.many(400, failures)
    },
  }
}

export type CustomMetadata = ReturnType<typeof createCustomMetadata>
