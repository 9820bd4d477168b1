export * from './event.js'
export * from './api.js'
export { checker, describe, fieldOf, type Checked } from './validator.js'
