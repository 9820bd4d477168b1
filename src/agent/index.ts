export { isBotAgent } from './bot.js'
export { describeClient } from './device.js'
