// The XML reader and escaping (src/util/xml.ts): what a well-formed document gives, text that
// comes back exactly as it was escaped, and each kind of document that is not well-formed (or
// that the reader refuses) answered with an XmlError at its place, never with a tree.
import { expect, test } from 'bun:test'
import { XmlError, escapeAttr, escapeText, isXmlText, namespaceOf, parseXml } from '../../src/util/xml.ts'

test('a document with a declaration, comments, a processing instruction, CDATA, references, both quotes and CRLF lines', () => {
  const doc = [
    '\uFEFF<?xml version="1.0" encoding="UTF-8" standalone="yes"?>',
    '<!-- before -->',
    '<?app do this?>',
    '<m:root xmlns:m="urn:x" a=\'1 "2"\' b="x&#9;y&#x41;&amp;">',
    '  <m:item>one &lt;&gt; &quot;&apos; &#x1F3AC;</m:item>',
    '  <m:item empty=""/>',
    '  <m:raw><![CDATA[<not> & markup]]></m:raw>',
    '  <!-- inside --><m:item>two\r\nlines\rand&#13;one</m:item>',
    '</m:root >',
    '<!-- after -->',
    '',
  ].join('\r\n')
  const root = parseXml(doc)
  expect(root).toEqual({
    name: 'm:root',
    attrs: { 'xmlns:m': 'urn:x', a: '1 "2"', b: 'x\tyA&' },
    text: '\n  \n  \n  \n  \n',
    children: [
      { name: 'm:item', attrs: {}, children: [], text: 'one <> "\' 🎬' },
      { name: 'm:item', attrs: { empty: '' }, children: [], text: '' },
      { name: 'm:raw', attrs: {}, children: [], text: '<not> & markup' },
      { name: 'm:item', attrs: {}, children: [], text: 'two\nlines\nand\rone' },
    ],
  })
  expect(namespaceOf(root)).toBe('urn:x')
})

test('escaped text and attribute values come back exactly, whatever they hold', () => {
  const values = ['plain', `& < > " ' ]]>`, '&amp; &#38;', 'tab\tline\nreturn\r\nend', 'Ærø 東京 🎬', '']
  for (const value of values) {
    const root = parseXml(`<r v="${escapeAttr(value)}">${escapeText(value)}</r>`)
    expect({ attr: root.attrs.v, text: root.text }).toEqual({ attr: value, text: value })
  }
  expect(escapeText(`a&b<c>d"e'f\rg`)).toBe('a&amp;b&lt;c&gt;d&quot;e&apos;f&#13;g')
  expect(escapeAttr('a\tb\nc')).toBe('a&#9;b&#10;c')
  // What XML cannot carry at all is refused, not written into a document no reader takes.
  expect(['\u0000', '\u0007', '\u001F', '\uFFFE', '\uD800', 'a\uDC00'].map(isXmlText)).toEqual(Array(6).fill(false))
  expect(isXmlText('\t\n\r 🎬')).toBe(true)
  expect(() => escapeText('bell\u0007')).toThrow(TypeError)
  expect(() => escapeAttr('bell\u0007')).toThrow(TypeError)
})

test('documents that are not well-formed, or that the reader refuses, are XmlErrors at their place', () => {
  const cases: [string, string][] = [
    ['<a><b></a>', '</a> closes <b> (line 1, column 9)'],
    ['<a>\n  <b>\n</a>', '</a> closes <b> (line 3, column 3)'],
    ['<a x="1" x="2"/>', 'the attribute x twice (line 1, column 10)'],
    ['<a x=1/>', 'expected a quoted attribute value (without "<") (line 1, column 6)'],
    ['<a x="<"/>', 'expected a quoted attribute value (without "<") (line 1, column 6)'],
    ['<a x="1"y="2"/>', 'expected white space, ">" or "/>" (line 1, column 9)'],
    ['<a>fish & chips</a>', 'an & that starts no known entity or character reference (line 1, column 9)'],
    ['<a>&nbsp;</a>', 'an & that starts no known entity or character reference (line 1, column 4)'],
    ['<a>&#1;</a>', 'a reference to a character XML cannot carry (&#1;) (line 1, column 4)'],
    ['<a>&#xD800;</a>', 'a reference to a character XML cannot carry (&#xD800;) (line 1, column 4)'],
    ['<a>\u0007</a>', 'a character XML cannot carry (U+0007) (line 1, column 4)'],
    ['<a>]]></a>', '"]]>" in text (line 1, column 4)'],
    ['<a>', 'the element a is not closed (line 1, column 4)'],
    ['<a/><b/>', 'a second root element (line 1, column 5)'],
    ['<a/>text', 'text after the root element (line 1, column 5)'],
    ['text<a/>', 'text outside the root element (line 1, column 1)'],
    ['', 'no root element (line 1, column 1)'],
    ['<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', 'a document type declaration (not accepted here) (line 1, column 1)'],
    ['<a><!-- a -- b --></a>', '"--" inside a comment (line 1, column 4)'],
    ['<a/><?xml version="1.0"?>', 'an XML declaration that is not at the start (line 1, column 10)'],
    [
      '<?xml version="1.0" encoding="ISO-8859-1"?><a/>',
      'the encoding ISO-8859-1 (only UTF-8 is read) (line 1, column 1)',
    ],
    ['<1a/>', 'expected a name (line 1, column 2)'],
  ]
  const got = cases.map(([doc]) => {
    try {
      parseXml(doc)
      return 'parsed'
    } catch (e) {
      return e instanceof XmlError ? e.message : `not an XmlError: ${e}`
    }
  })
  expect(got).toEqual(cases.map(([, message]) => message))
})
