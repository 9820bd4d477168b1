import t from 'tap'
import { describeClient } from './device.js'

const UA = {
  chromeLinux: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  edgeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  chromebook: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  iphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  pixel: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  galaxyTab: 'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  watch: 'Mozilla/5.0 (Linux; Android 11; SM-R875F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  smartTv:
    'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  googlebotDesktop:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/124.0.6367.201 Safari/537.36',
  androidNoModel: 'Mozilla/5.0 (Linux; Android 10) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
}

t.test('desktop browsers and systems', async (t) => {
  t.same(describeClient(UA.chromeLinux, undefined), { device: 'desktop', browser: 'Chrome', os: 'Linux' })
  t.same(describeClient(UA.edgeWindows, 1920), { device: 'desktop', browser: 'Edge', os: 'Windows' })
  t.same(describeClient(UA.firefoxWindows, undefined), { device: 'desktop', browser: 'Firefox', os: 'Windows' })
  t.same(describeClient(UA.safariMac, 1440), { device: 'desktop', browser: 'Safari', os: 'macOS' })
  t.same(describeClient(UA.chromebook, undefined), { device: 'desktop', browser: 'Chrome', os: 'Chrome OS' })
})

t.test('a desktop browser without a named system is a desktop', async (t) => {
  t.same(describeClient(UA.googlebotDesktop, undefined), { device: 'desktop', browser: 'Chrome', os: null })
})

t.test('a handheld system without a device class: the screen decides', async (t) => {
  t.same(describeClient(UA.androidNoModel, undefined), { device: null, browser: 'Chrome', os: 'Android' })
  t.equal(describeClient(UA.androidNoModel, 360).device, 'mobile')
  t.equal(describeClient(UA.androidNoModel, 800).device, 'tablet')
})

t.test('the user agent wins over the screen width when it tells', async (t) => {
  t.equal(describeClient(UA.chromeLinux, 500).device, 'desktop', 'a narrow desktop screen')
  t.equal(describeClient(UA.iphone, 2000).device, 'mobile')
})

t.test('phones and tablets', async (t) => {
  t.same(describeClient(UA.iphone, 390), { device: 'mobile', browser: 'Safari', os: 'iOS' }, '"Mobile Safari" is Safari')
  t.same(describeClient(UA.pixel, 412), { device: 'mobile', browser: 'Chrome', os: 'Android' })
  t.same(describeClient(UA.ipad, 820), { device: 'tablet', browser: 'Safari', os: 'iOS' })
  t.same(describeClient(UA.galaxyTab, undefined), { device: 'tablet', browser: 'Chrome', os: 'Android' })
  t.equal(describeClient(UA.watch, undefined).device, 'mobile', 'a watch is handheld')
})

t.test('an iPad asking for the desktop site sends a Mac user agent: its screen gives it away', async (t) => {
  t.equal(describeClient(UA.safariMac, 820).device, 'tablet')
  t.equal(describeClient(UA.safariMac, 1024).device, 'desktop')
  t.equal(describeClient(UA.safariMac, undefined).device, 'desktop')
})

t.test('the screen width decides when the user agent cannot', async (t) => {
  for (const ua of [undefined, '', UA.googlebot, 'curl/8.5.0', UA.smartTv]) {
    t.equal(describeClient(ua, 320).device, 'mobile', `${ua} 320`)
    t.equal(describeClient(ua, 767).device, 'mobile', `${ua} 767`)
    t.equal(describeClient(ua, 768).device, 'tablet', `${ua} 768`)
    t.equal(describeClient(ua, 1023).device, 'tablet', `${ua} 1023`)
    t.equal(describeClient(ua, 1024).device, 'desktop', `${ua} 1024`)
  }
})

t.test('nothing to go by: null', async (t) => {
  t.same(describeClient(undefined, undefined), { device: null, browser: null, os: null })
  t.same(describeClient('', undefined), { device: null, browser: null, os: null })
  t.same(describeClient('curl/8.5.0', undefined), { device: null, browser: null, os: null })
  t.equal(describeClient(undefined, 0).device, null)
  t.equal(describeClient(undefined, -5).device, null)
  t.equal(describeClient(undefined, NaN).device, null)
})

t.test('a TV is named by the parser but its device class comes from the screen', async (t) => {
  const tv = describeClient(UA.smartTv, undefined)
  t.equal(tv.device, null)
  t.equal(tv.os, 'Tizen')
  t.equal(tv.browser, 'Samsung Internet')
})

t.test('recent user agents are remembered: a repeat costs a lookup, not a parse', async (t) => {
  const agents = Array.from({ length: 300 }, (_, i) => UA.chromeLinux.replace('124.0.0.0', `124.0.${i}.0`))
  const pass = () => {
    const start = process.hrtime.bigint()
    for (const ua of agents) describeClient(ua, 1280)
    return Number(process.hrtime.bigint() - start)
  }
  const first = pass()
  const second = pass()
  t.ok(second * 3 < first, `second pass ${second} ns, first ${first} ns`)
  t.same(describeClient(agents[7], 1280), { device: 'desktop', browser: 'Chrome', os: 'Linux' })
})

t.test('answers stay right after the memory is full and old entries leave', async (t) => {
  for (let i = 0; i < 1200; i++) describeClient(`Mozilla/5.0 (X11; Linux x86_64) Firefox/${i}.0`, undefined)
  t.same(describeClient(UA.iphone, 390), { device: 'mobile', browser: 'Safari', os: 'iOS' })
  t.same(describeClient('Mozilla/5.0 (X11; Linux x86_64) Firefox/3.0', undefined), { device: 'desktop', browser: 'Firefox', os: 'Linux' })
})
