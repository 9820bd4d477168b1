/**
 * Why a valid event is answered 202 but not counted. A closed list, so that metrics can keep one
 * counter per reason and a new reason is a compile error wherever reasons are handled.
 */
export const DROP_REASONS = ['bot'] as const

export type DropReason = (typeof DROP_REASONS)[number]
