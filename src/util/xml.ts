// XML text written and read back, for the small documents Reelhouse exchanges with other tools
// (ASC MHL manifests and their chain files): escaping for text and attribute values, and a parser
// that checks well-formedness as it builds a tree of elements.
//
// The parser takes XML 1.0 without a document type declaration: a DOCTYPE is refused, so no
// entity of the document's own can be declared, and nothing is ever expanded beyond the five
// predefined entities and character references (a manifest from elsewhere cannot make the
// reader fetch a file or grow a billion-laughs string). Namespace prefixes are kept in the names
// as written; callers compare local names (localName) and check the root's namespace.

/** An element: its name as written (with any prefix), its attributes, its child elements, and its text (all its text children, joined; CDATA included). */
export type XmlElement = {
  name: string
  attrs: Record<string, string>
  children: XmlElement[]
  text: string
}

/** A document that is not well-formed XML, or that this parser does not take; `line` and `column` count from 1. */
export class XmlError extends Error {
  override readonly name = 'XmlError'
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} (line ${line}, column ${column})`)
  }
}

/**
 * Characters that XML 1.0 cannot carry at all, not even as a character reference: the control
 * characters but tab, LF and CR, lone surrogate halves, U+FFFE and U+FFFF. A file name holding
 * one (Linux allows them) cannot be written into an XML document.
 */
const NOT_XML =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Whether `text` holds only characters that an XML document can carry. */
export const isXmlText = (text: string): boolean => !NOT_XML.test(text)

const TEXT_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // A reader turns a CR of the document into LF (XML's end-of-line handling); a reference keeps it.
  '\r': '&#13;',
}
const ATTR_ESCAPES: Record<string, string> = {
  ...TEXT_ESCAPES,
  // A reader turns these into spaces in an attribute's value; references keep them.
  '\t': '&#9;',
  '\n': '&#10;',
}

/** `text` as element content. Throws on a character XML cannot carry (isXmlText). */
export function escapeText(text: string): string {
  if (!isXmlText(text)) throw new TypeError(`text that XML cannot carry: ${JSON.stringify(text)}`)
  return text.replace(/[&<>"'\r]/g, (c) => TEXT_ESCAPES[c]!)
}

/** `value` inside a double-quoted attribute. Throws on a character XML cannot carry (isXmlText). */
export function escapeAttr(value: string): string {
  if (!isXmlText(value)) throw new TypeError(`text that XML cannot carry: ${JSON.stringify(value)}`)
  return value.replace(/[&<>"'\t\n\r]/g, (c) => ATTR_ESCAPES[c]!)
}

/** The name without its namespace prefix. */
export const localName = (name: string): string => name.slice(name.indexOf(':') + 1)

/**
 * The namespace an element's name is in, looked up in the element's own declarations only (the
 * root's, in practice): xmlns for an unprefixed name, xmlns:p for p:name.
 */
export function namespaceOf(element: XmlElement): string | undefined {
  const colon = element.name.indexOf(':')
  return element.attrs[colon < 0 ? 'xmlns' : `xmlns:${element.name.slice(0, colon)}`]
}

/** The first child element with this local name. */
export const child = (element: XmlElement, name: string): XmlElement | undefined =>
  element.children.find((c) => localName(c.name) === name)

/** Every child element with this local name (none of an element that is not there). */
export const childrenNamed = (element: XmlElement | undefined, name: string): XmlElement[] =>
  element?.children.filter((c) => localName(c.name) === name) ?? []

const NAME =
  /[A-Za-z_:\u00C0-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\uD800-\uDBFF][-.\w:\u00B7\u00C0-\u02FF\u0300-\u037D\u037F-\u1FFF\u200C\u200D\u203F\u2040\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD\uD800-\uDFFF]*/y
const SPACE = /[ \t\n]*/y
const ATTR_VALUE = /"([^"<]*)"|'([^'<]*)'/y
const ENTITY = /&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#x([0-9A-Fa-f]+));/y
const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/**
 * Parses a whole document into its root element. Throws XmlError at the first place where it is
 * not well-formed: a tag left open or closed by another name, an attribute twice, a bare `&` or
 * `<`, an unknown entity, a character XML cannot carry, text or a second element outside the
 * root, a DOCTYPE (refused, see above).
 */
export function parseXml(source: string): XmlElement {
  // End-of-line handling (XML 1.0 section 2.11): CR LF and a lone CR are read as LF.
  const doc = (source.charCodeAt(0) === 0xfeff ? source.slice(1) : source).replace(/\r\n?/g, '\n')
  let at = 0

  const fail = (reason: string, where = at): never => {
    const before = doc.slice(0, where)
    const line = before.split('\n').length
    throw new XmlError(reason, line, where - before.lastIndexOf('\n'))
  }
  const sticky = (re: RegExp) => {
    re.lastIndex = at
    const m = re.exec(doc)
    if (m) at = re.lastIndex
    return m
  }
  const space = () => sticky(SPACE)![0].length > 0
  const expect = (text: string) => {
    if (!doc.startsWith(text, at)) fail(`expected ${JSON.stringify(text)}`)
    at += text.length
  }
  const name = () => sticky(NAME)?.[0] ?? fail('expected a name')

  /** Text with its references replaced; `attr`: white space becomes spaces (attribute-value normalization). */
  const decode = (raw: string, start: number, attr: boolean): string => {
    const bad = NOT_XML.exec(raw)
    if (bad)
      fail(
        `a character XML cannot carry (U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`,
        start + bad.index,
      )
    // In an attribute, white space written as such becomes a space; a reference keeps its character.
    const literal = attr ? (s: string) => s.replace(/[\t\n]/g, ' ') : (s: string) => s
    let out = ''
    let from = 0
    for (let i = raw.indexOf('&'); i >= 0; i = raw.indexOf('&', from)) {
      out += literal(raw.slice(from, i))
      ENTITY.lastIndex = i
      const m = ENTITY.exec(raw) ?? fail('an & that starts no known entity or character reference', start + i)
      if (m[1]) out += PREDEFINED[m[1]]
      else {
        const code = Number.parseInt(m[2] ?? m[3]!, m[2] ? 10 : 16)
        const char = code <= 0x10ffff ? String.fromCodePoint(code) : ''
        if (!char || !isXmlText(char) || code === 0)
          fail(`a reference to a character XML cannot carry (${m[0]})`, start + i)
        out += char
      }
      from = ENTITY.lastIndex
    }
    return out + literal(raw.slice(from))
  }

  /** Comments, processing instructions and white space, as allowed outside the root and between elements. */
  const misc = (): boolean => {
    if (doc.startsWith('<!--', at)) {
      const end = doc.indexOf('-->', at + 4)
      if (end < 0) fail('a comment is not closed')
      if (doc.slice(at + 4, end).includes('--') || (end > at + 4 && doc[end - 1] === '-')) fail('"--" inside a comment')
      at = end + 3
      return true
    }
    if (doc.startsWith('<?', at)) {
      at += 2
      if (name().toLowerCase() === 'xml') fail('an XML declaration that is not at the start')
      const end = doc.indexOf('?>', at)
      if (end < 0) fail('a processing instruction is not closed')
      at = end + 2
      return true
    }
    if (doc.startsWith('<!DOCTYPE', at)) fail('a document type declaration (not accepted here)')
    return false
  }

  const element = (): XmlElement => {
    expect('<')
    const tag = name()
    const attrs: Record<string, string> = {}
    for (;;) {
      const spaced = space()
      if (doc.startsWith('/>', at)) {
        at += 2
        return { name: tag, attrs, children: [], text: '' }
      }
      if (doc[at] === '>') {
        at++
        break
      }
      if (!spaced) fail('expected white space, ">" or "/>"')
      const attrAt = at
      const key = name()
      if (Object.hasOwn(attrs, key)) fail(`the attribute ${key} twice`, attrAt)
      space()
      expect('=')
      space()
      const valueAt = at + 1
      const m = sticky(ATTR_VALUE) ?? fail('expected a quoted attribute value (without "<")')
      attrs[key] = decode(m[1] ?? m[2]!, valueAt, true)
    }
    const children: XmlElement[] = []
    let text = ''
    for (;;) {
      const lt = doc.indexOf('<', at)
      if (lt < 0) fail(`the element ${tag} is not closed`, doc.length)
      const raw = doc.slice(at, lt)
      const cdataEnd = raw.indexOf(']]>')
      if (cdataEnd >= 0) fail('"]]>" in text', at + cdataEnd)
      text += decode(raw, at, false)
      at = lt
      if (doc.startsWith('</', at)) {
        at += 2
        const closeAt = at
        const closing = name()
        if (closing !== tag) fail(`</${closing}> closes <${tag}>`, closeAt)
        space()
        expect('>')
        return { name: tag, attrs, children, text }
      }
      if (doc.startsWith('<![CDATA[', at)) {
        const end = doc.indexOf(']]>', at + 9)
        if (end < 0) fail('a CDATA section is not closed')
        const raw = doc.slice(at + 9, end)
        const bad = NOT_XML.exec(raw)
        if (bad) fail('a character XML cannot carry', at + 9 + bad.index)
        text += raw
        at = end + 3
        continue
      }
      if (misc()) continue
      children.push(element())
    }
  }

  if (doc.startsWith('<?xml', at) && /[\s?]/.test(doc[at + 5] ?? '')) {
    const end = doc.indexOf('?>', at)
    if (end < 0) fail('the XML declaration is not closed')
    const declaration = doc.slice(at, end)
    if (!/^<\?xml\s+version\s*=\s*(["'])1\.[0-9]+\1/.test(declaration)) fail('an XML declaration without a version')
    const encoding = /\sencoding\s*=\s*(["'])([^"']*)\1/.exec(declaration)?.[2]
    if (encoding && !/^utf-?8$/i.test(encoding)) fail(`the encoding ${encoding} (only UTF-8 is read)`)
    at = end + 2
  }
  while (space() || misc());
  if (doc[at] !== '<') fail(at >= doc.length ? 'no root element' : 'text outside the root element')
  const root = element()
  while (space() || misc());
  if (at < doc.length) fail(doc[at] === '<' ? 'a second root element' : 'text after the root element')
  return root
}
