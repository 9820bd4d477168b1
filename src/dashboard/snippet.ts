/**
 * The tag a site owner pastes into their pages (docs/api.md §7): the script from this server, told
 * which site it counts for.
 *
 * @example
 * snippet('https://stats.example', 'shop')
 * // '<script defer src="https://stats.example/script.js" data-site-id="shop"></script>'
 */
export function snippet(origin: string, siteId: string): string {
  return `<script defer src="${escapeAttr(origin.replace(/\/+$/, ''))}/script.js" data-site-id="${escapeAttr(siteId)}"></script>`
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}
