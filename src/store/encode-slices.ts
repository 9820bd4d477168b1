/**
 * How long a snapshot encodes before it lets the event loop turn. By time, not by count: on a
 * shared core 1000 operations took 30–80 ms of wall time while the store's own threads ran.
 */
const SLICE_MS = 4
/** operations between two looks at the clock */
const CLOCK_EVERY = 32

/**
 * One turn of the event loop shared by every snapshot encoding under way. Partitions snapshot
 * together: each with a clock of its own ran its own 4 ms in the same turn (four partitions, 16 ms
 * and more). Now the first to resume spends the turn's budget and the others yield at their next look.
 */
let turn: Promise<void> | null = null
let turnStart = 0

function nextTurn(): Promise<void> {
  turn ??= new Promise<void>((resolve) => setImmediate(() => {
    turn = null
    turnStart = performance.now()
    resolve()
  }))
  return turn
}

/**
 * Called after each operation a snapshot encodes (the `n`th): every CLOCK_EVERY operations, yields
 * to the event loop when this turn's budget is spent.
 */
export function sliceDue(n: number): Promise<void> | undefined {
  return n % CLOCK_EVERY === 0 ? turnDue() : undefined
}

/** Yields to the event loop when this turn's budget is spent (for work that times itself in steps). */
export function turnDue(): Promise<void> | undefined {
  return performance.now() - turnStart >= SLICE_MS ? nextTurn() : undefined
}
