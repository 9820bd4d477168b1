/**
 * Partitions over group members, balanced (counts differ by at most one) and sticky: a partition
 * stays with the member that owned it when that keeps the balance, because a move costs the new
 * owner a restore. Pure, so every input can be tested without a broker.
 */
export interface Candidate {
  id: string
  owned: number[]
}

export function assignSticky(members: Candidate[], partitions: number): Map<string, number[]> {
  const ids = members.map((m) => m.id).sort()
  const result = new Map<string, number[]>(ids.map((id) => [id, []]))
  if (ids.length === 0) return result
  const base = Math.floor(partitions / ids.length)
  // how many members may still keep one more than the base share
  let roomForExtra = partitions % ids.length
  const taken = new Set<number>()
  // first, members keep what they owned, up to a balanced share
  const byId = new Map(members.map((m) => [m.id, m]))
  for (const id of ids) {
    const mine = result.get(id)!
    for (const p of [...new Set(byId.get(id)!.owned)].sort((a, b) => a - b)) {
      if (p < 0 || p >= partitions || taken.has(p)) continue
      if (mine.length >= base && !(mine.length === base && roomForExtra > 0)) break
      if (mine.length === base) roomForExtra--
      mine.push(p)
      taken.add(p)
    }
  }
  // then the rest go to the least loaded, ties by member id
  for (let p = 0; p < partitions; p++) {
    if (taken.has(p)) continue
    let best = ids[0]
    for (const id of ids) if (result.get(id)!.length < result.get(best)!.length) best = id
    result.get(best)!.push(p)
  }
  for (const list of result.values()) list.sort((a, b) => a - b)
  return result
}
