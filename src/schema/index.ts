export * from './event.js'
export * from './api.js'
export { checker, createAjv, fieldOf, sentence, type Checked } from './validator.js'
export * from './status.js'
