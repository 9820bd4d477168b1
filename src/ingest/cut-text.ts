/**
 * Descriptive text is cut, never rejected (docs/api.md §1). Both cuts keep the text well-formed:
 * a surrogate pair or a multi-byte UTF-8 sequence is never split in two.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff
}

/**
 * Cuts `text` to at most `max` UTF-16 code units (JavaScript's `length`), one shorter when the
 * cut would separate a surrogate pair.
 *
 * @example cutChars('ab😀', 3) === 'ab'
 */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text
  const end = max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max
  return text.slice(0, end)
}

/**
 * Cuts `text` so that its UTF-8 encoding takes at most `maxBytes` bytes, ending on a character
 * boundary. Counts bytes while walking instead of encoding, so short text costs nothing and long
 * text is never copied into a Buffer. A lone surrogate counts as the 3 bytes of the U+FFFD that
 * an encoder writes in its place.
 *
 * @example cutUtf8Bytes('aé', 2) === 'a'   // é takes 2 bytes
 */
export function cutUtf8Bytes(text: string, maxBytes: number): string {
  // every UTF-16 code unit encodes to at most 3 bytes
  if (text.length * 3 <= maxBytes) return text
  let bytes = 0
  let i = 0
  while (i < text.length) {
    const code = text.charCodeAt(i)
    let size: number
    let units = 1
    if (code < 0x80) size = 1
    else if (code < 0x800) size = 2
    else if (isHighSurrogate(code) && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      size = 4
      units = 2
    } else size = 3
    if (bytes + size > maxBytes) return text.slice(0, i)
    bytes += size
    i += units
  }
  return text
}
