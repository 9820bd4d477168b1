export { isBotAgent } from './bot.js'
export { describeClient, describeClientInto } from './device.js'
export { openCountryLookup, type CountryOf } from './country.js'
