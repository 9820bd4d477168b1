export { send, cookiePair, setCookieLine, type Reply, type RequestOptions } from './http.js'
export {
  startServer, startExpectingExit, makeDataDir, freePort, sleep, FRESHNESS_MS, type Exited, type Server, type StartOptions, type Teardown,
} from './server.js'
export { uid, minutesAgo, daysAgo, startOfUtcDay, dateInZone, addDays, UA, pageview, customEvent, type EventBody } from './fixtures.js'
export {
  createSite, createGoal, postEvents, postEvent, createUser, login, createKey, userWithKey, getGoals, pollUntil,
  settledGoals, goalIn, sessionsPage, allSessions,
  type Site, type Goal, type User, type GoalStats, type GoalsAnswer, type SessionRow, type SessionsPage,
} from './api.js'
export { isError, namesField, hasCors, type Asserts } from './expect.js'
export { filesHolding } from './files.js'
export { launchBrowser, newPage, screenshot, VISITOR_AGENT, CHROMIUM_PATH, CHROMIUM_ARGS, SCREENSHOT_DIR, type PageOptions } from './browser.js'
export { startRecorder, type Recorder, type Recorded } from './recorder.js'
export { serveFixtureSite, type FixtureSite } from './fixture-site.js'
