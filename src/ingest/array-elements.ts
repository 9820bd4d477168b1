const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * Where each element of a JSON array lies in its text: `[start, end)` byte offsets per element,
 * two entries each, or -1, -1 for an element that is not an object. Lets a batch log each
 * event's own bytes (see logged-bytes.ts) instead of serializing it again.
 *
 * Only for text that JSON.parse accepted as an array: it tracks strings and nesting, nothing else,
 * and answers null when the text does not look like an array after all.
 *
 * @example objectElementRanges(Buffer.from('[{"a":1}, 2]')) // Int32Array [1, 8, -1, -1]
 */
export function objectElementRanges(text: Buffer): Int32Array | null {
  let i = text.indexOf(OPEN_BRACKET)
  if (i === -1) return null
  const out: number[] = []
  let depth = 0
  let start = -1
  let object = false
  for (i = i + 1; i < text.length; i++) {
    const b = text[i]
    if (b === QUOTE) {
      // a string: skip to its closing quote; the first element may start with one
      if (depth === 0 && start === -1) (start = i), (object = false)
      for (i++; i < text.length && text[i] !== QUOTE; i++) if (text[i] === BACKSLASH) i++
      continue
    }
    if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (depth === 0 && start === -1) (start = i), (object = b === OPEN_BRACE)
      depth++
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      if (depth === 0) {
        // the array's own closing bracket
        if (start !== -1) out.push(-1, -1)
        return Int32Array.from(out)
      }
      depth--
      if (depth === 0 && object) {
        out.push(start, i + 1)
        start = -1
      }
    } else if (depth === 0) {
      if (b === 0x2c) {
        // a comma ends an element that was not an object (its end was not recorded yet)
        if (start !== -1) out.push(-1, -1)
        start = -1
      } else if (start === -1 && b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
        // a number, true, false or null
        start = i
        object = false
      }
    }
  }
  return null
}
