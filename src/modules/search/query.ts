// A user's search text turned into an FTS5 query (pure: no database). Every word and phrase is
// written as an FTS5 string, so nothing the user types reaches the engine as syntax: quotes,
// `*`, `:`, parentheses, NEAR, AND, OR and NOT are text, and the tokenizer splits a string at
// whatever is no letter or digit, as it split the indexed text.

/** How long a search text may be, and how many words and phrases it may hold. */
export const MAX_QUERY_CHARS = 1000
export const MAX_QUERY_TERMS = 32

export type Term = { text: string; phrase: boolean; exclude: boolean }

/**
 * A search text as FTS5 queries: `match` the whole (null: nothing to look for), `wanted` the
 * words and phrases to find, without the exclusions (for a column filter), and `inside` what the
 * trigram index is asked (see Inside; absent when no word may be found inside another). Or why it
 * cannot be searched, for a 400 at parameter q.
 */
export type Parsed = { match: string; wanted: string; inside?: Inside } | { match: null } | { refused: string }

/**
 * How the words of a search are found inside words of a name or path (`C003` in `A001C003`): by
 * the trigram index of names and paths whose words lack their first letter (migration 0024), so
 * that it holds a word only where it does not start a word (the word index finds those). A word of
 * MIN_INSIDE or more letters and digits may be found there; a phrase, an exclusion or a word
 * holding any other character is found only by the word index.
 *   `any`: the trigram query of those words, OR-ed (a record it finds holds one of them inside a word);
 *   `terms`: every word and phrase wanted, each as the word index's query and, for those that may
 *   be, the trigram index's (a record must hold each in the one or the other);
 *   `excluded`: the exclusions, for the word index, OR-ed; `all`: the words wanted as the word
 *   index has them AND-ed (a record it finds is a hit of the word index already).
 */
export type Inside = {
  any: string
  terms: { word: string; inside?: string }[]
  excluded?: string
  all: string
}

/** The fewest characters a word found inside another has (a trigram is three). */
export const MIN_INSIDE = 3
/** A word of letters and digits only: the tokenizer keeps it whole, and the trigram text holds it as typed. */
const ALNUM = /^[\p{L}\p{N}]+$/u

// A term: an optional '-', then a quoted phrase (its closing quote may be missing) or a run of non-space.
const TERM = /(-?)(?:"([^"]*)"?|(\S+))/g
/**
 * Control characters (U+0000 to U+001F, tab and line breaks among them, and U+007F): a search text
 * is a line typed in a box, which holds none, and FTS5 reads its query only up to a NUL (a quoted
 * word holding one is a string never closed). A text holding any is refused.
 */
const CONTROL = /[\u0000-\u001f\u007f]/
/** The tokenizer makes tokens of letters and digits (unicode61); a term without any finds nothing. */
const WORDY = /[\p{L}\p{N}]/u

/** The words and phrases of a search text, in order. */
export function terms(q: string): Term[] {
  const out: Term[] = []
  for (const m of q.matchAll(TERM)) {
    const [, minus, quoted, bare] = m
    if (quoted !== undefined) out.push({ text: quoted, phrase: true, exclude: minus === '-' })
    // A lone '-' (or "--x"'s first minus) is no exclusion of nothing: the rest is the word.
    else if (bare !== undefined) out.push({ text: bare, phrase: false, exclude: minus === '-' })
    else if (minus) continue
  }
  return out
}

/** An FTS5 string: the text in double quotes, a quote inside doubled. */
const quote = (text: string) => `"${text.replaceAll('"', '""')}"`

/**
 * The FTS5 query of a search text: every word a prefix (`interv` finds Interview; a single
 * character is matched whole, as a prefix of one letter would match most of a catalogue), a
 * quoted phrase exact, `-word` and `-"a phrase"` excluded, the rest AND-ed. `match: null`: the
 * text holds no letter or digit to look for (nothing is found).
 */
export function toMatch(q: string): Parsed {
  if (CONTROL.test(q))
    return {
      refused: 'q must not hold control characters (U+0000 to U+001F, such as NUL, tab or a line break, or U+007F).',
    }
  const text = q.trim()
  if (!text) return { refused: 'q must not be empty: give the words to look for.' }
  if (q.length > MAX_QUERY_CHARS) return { refused: `q is at most ${MAX_QUERY_CHARS} characters long.` }
  const all = terms(text).filter((t) => WORDY.test(t.text))
  if (all.length > MAX_QUERY_TERMS) return { refused: `q may hold at most ${MAX_QUERY_TERMS} words and phrases.` }
  const written = (t: Term) => (t.phrase || [...t.text].length < 2 ? quote(t.text) : `${quote(t.text)}*`)
  const wanted = all.filter((t) => !t.exclude).map(written)
  const excluded = all.filter((t) => t.exclude).map(written)
  if (!wanted.length) {
    if (excluded.length) return { refused: 'q excludes words (-word) but names none to look for: add one.' }
    return { match: null }
  }
  const positive = wanted.length === 1 ? wanted[0]! : `(${wanted.join(' AND ')})`
  const match = excluded.reduce((query, word) => `${query} NOT ${word}`, positive)
  // Words that may be found inside others: the trigram index's query of each, lowercased as its text is.
  const inner = (t: Term) =>
    !t.phrase && !t.exclude && ALNUM.test(t.text) && [...t.text].length >= MIN_INSIDE
      ? quote(t.text.toLowerCase())
      : undefined
  const positives = all.filter((t) => !t.exclude)
  const insides = positives.map(inner).filter((x) => x !== undefined)
  if (!insides.length) return { match, wanted: positive }
  return {
    match,
    wanted: positive,
    inside: {
      any: insides.length === 1 ? insides[0]! : `(${[...new Set(insides)].join(' OR ')})`,
      terms: positives.map((t) => ({ word: written(t), inside: inner(t) })),
      excluded: excluded.length ? (excluded.length === 1 ? excluded[0]! : `(${excluded.join(' OR ')})`) : undefined,
      all: positive,
    },
  }
}

/** A word or phrase of a search text as toMatch looks for it (for an engine that takes no FTS5 query). */
export type Searched = Term & {
  /** Its last word is matched as the start of a word (toMatch writes `"x"*`). */
  prefix: boolean
  /** It may also be found inside a word of a name or path (Inside): the word lowercased, as toMatch asks for it. */
  inside: string | undefined
}

/**
 * The words and phrases toMatch looks for, in order: those holding a letter or digit, each with
 * toMatch's rules (a bare word of two or more characters a prefix; a wanted word of MIN_INSIDE or
 * more letters and digits found inside words too). Call it on a text toMatch did not refuse.
 */
export function searchedTerms(q: string): Searched[] {
  return terms(q.trim())
    .filter((t) => WORDY.test(t.text))
    .map((t) => ({
      ...t,
      prefix: !t.phrase && [...t.text].length >= 2,
      inside:
        !t.phrase && !t.exclude && ALNUM.test(t.text) && [...t.text].length >= MIN_INSIDE
          ? t.text.toLowerCase()
          : undefined,
    }))
}
