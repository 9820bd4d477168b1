/**
 * What a group member tells the others, in the userData of its group-protocol metadata (which
 * DescribeGroups returns for every member), as JSON, version 1:
 *
 *   { "v": 1, "url": "<query base URL>", "owned": [<partitions it owns as it rejoins>] }
 *
 * `owned` lets the leader keep partitions where they are (sticky assignment).
 */
export interface MemberData {
  url: string
  owned: number[]
}

export function encodeMemberData(data: MemberData): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, url: data.url, owned: data.owned }))
}

/** Tolerant: a member of another version or a stray client still gets partitions. */
export function decodeMemberData(buf: Buffer | null | undefined): MemberData {
  try {
    const parsed = JSON.parse(buf?.toString('utf8') ?? '') as { url?: unknown; owned?: unknown }
    const owned = Array.isArray(parsed.owned) ? parsed.owned.filter((p): p is number => Number.isInteger(p)) : []
    return { url: typeof parsed.url === 'string' ? parsed.url : '', owned }
  } catch {
    return { url: '', owned: [] }
  }
}
