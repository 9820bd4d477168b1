/**
 * Throughput and latency of the embedded log on this machine's disk:
 *   - appends/s with one record per append at concurrency 1, 64 and 1024 (group commit at work)
 *   - records/s with appends of 1000 records
 *   - append → subscriber delivery latency (p50/p99) while appending at concurrency 64
 * Run after a build: `node bench/log.mjs [seconds per case]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EmbeddedLog } from '../dist/log/index.js';
const TOPIC = 'bench';
const VALUE = Buffer.from(JSON.stringify({ type: 'pageview', site_id: 'example.com', path: '/'.padEnd(240, 'x') }));
function percentile(sorted, q) {
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
async function withFreshLog(fn) {
    const dir = await mkdtemp(join(tmpdir(), 'goalpost-bench-'));
    const log = await EmbeddedLog.open({ dir });
    try {
        await log.createTopic({ name: TOPIC, partitions: 8 });
        return await fn(log);
    }
    finally {
        await log.close();
        await rm(dir, { recursive: true, force: true });
    }
}
/** `concurrency` loops, each appending `perAppend` records and awaiting it, for `seconds`. */
async function appendLoad(log, concurrency, perAppend, seconds) {
    const stopAt = performance.now() + seconds * 1000;
    const latencies = [];
    let appends = 0;
    let n = 0;
    const worker = async () => {
        while (performance.now() < stopAt) {
            const records = Array.from({ length: perAppend }, () => ({
                key: `s${n++}`,
                value: VALUE,
                timestamp: Date.now(),
            }));
            const start = performance.now();
            await log.append(TOPIC, records);
            latencies.push(performance.now() - start);
            appends++;
        }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const elapsed = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    return { appends, elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}
async function throughput(name, concurrency, perAppend, seconds) {
    return withFreshLog(async (log) => {
        const r = await appendLoad(log, concurrency, perAppend, seconds);
        return {
            name,
            appendsPerSec: r.appends / r.elapsed,
            recordsPerSec: (r.appends * perAppend) / r.elapsed,
            p50Ms: r.p50,
            p99Ms: r.p99,
        };
    });
}
/** Latency from the append call to the subscriber's handler, one subscriber per partition. */
async function deliveryLatency(seconds) {
    return withFreshLog(async (log) => {
        const sent = new Map();
        const latencies = [];
        const subs = Array.from({ length: 8 }, (_, p) => log.subscribe(TOPIC, p, 0, (records) => {
            const now = performance.now();
            for (const r of records)
                latencies.push(now - (sent.get(r.key) ?? now));
        }));
        let n = 0;
        const stopAt = performance.now() + seconds * 1000;
        const worker = async () => {
            while (performance.now() < stopAt) {
                const key = `s${n++}`;
                sent.set(key, performance.now());
                await log.append(TOPIC, [{ key, value: VALUE, timestamp: Date.now() }]);
            }
        };
        const start = performance.now();
        await Promise.all(Array.from({ length: 64 }, worker));
        const elapsed = (performance.now() - start) / 1000;
        await new Promise((resolve) => setTimeout(resolve, 50));
        await Promise.all(subs.map((s) => s.close()));
        latencies.sort((a, b) => a - b);
        return {
            name: 'subscribe delivery (append call → handler), concurrency 64',
            appendsPerSec: n / elapsed,
            recordsPerSec: latencies.length / elapsed,
            p50Ms: percentile(latencies, 0.5),
            p99Ms: percentile(latencies, 0.99),
        };
    });
}
export async function benchEmbeddedLog(seconds = 3) {
    return [
        await throughput('1 record per append, concurrency 1', 1, 1, seconds),
        await throughput('1 record per append, concurrency 64', 64, 1, seconds),
        await throughput('1 record per append, concurrency 1024', 1024, 1, seconds),
        await throughput('1000 records per append, concurrency 1', 1, 1000, seconds),
        await throughput('1000 records per append, concurrency 4', 4, 1000, seconds),
        await deliveryLatency(seconds),
    ];
}
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
    const seconds = Number(process.argv[2] ?? 3);
    for (const r of await benchEmbeddedLog(seconds)) {
        const rate = (n, width) => Math.round(n).toString().padStart(width);
        const latency = r.p50Ms === undefined ? '' : `  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms?.toFixed(2)} ms`;
        console.log(`${r.name.padEnd(60)} ${rate(r.appendsPerSec, 8)} appends/s ${rate(r.recordsPerSec, 9)} records/s${latency}`);
    }
}
