export { isBotAgent } from './bot.js'
export { describeClient } from './device.js'
export { openCountryLookup, type CountryOf } from './country.js'
