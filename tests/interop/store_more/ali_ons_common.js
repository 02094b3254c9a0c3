// What the store_more interop scripts share: ali-ons options pointing at the
// daemon's NameServer, a hard timeout, polling with a deadline, the RESULT
// line the C test waits for. Every script prints "RESULT ok" or
// "RESULT fail <why>" and exits.
'use strict';
const { Consumer, Producer, Message } = require('ali-ons');

const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
// used only for the Aliyun address server, which nameSrv makes unnecessary
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };

function options(nsPort) {
  return { httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`, clientIP: '127.0.0.1',
    rebalanceInterval: 1000 };
}

function hardTimeout(ms) {
  setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, ms).unref();
}

const pause = ms => new Promise(r => setTimeout(r, ms));

// true once cond() holds, false when ms pass first
async function until(cond, ms) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) return false;
    await pause(50);
  }
  return true;
}

// true when the consumer holds no message it pulled and has not finished
// handling (its offsets then cover everything it handled)
function drained(consumer) {
  for (const item of consumer.processQueueTable.values())
    if (item.processQueue.msgCount) return false;
  return true;
}

// run main(problems); print the RESULT line and exit
function run(main) {
  const problems = [];
  main(problems).then(() => {
    console.log(problems.length ? `RESULT fail ${problems.slice(0, 6).join('; ')}` : 'RESULT ok');
    process.exit(0);
  }, err => {
    console.log(`RESULT fail ${err && err.stack ? err.stack.split('\n').slice(0, 2).join(' ') : err}`);
    process.exit(2);
  });
}

// deliveries per key must be exactly once for every wanted key
function exactlyOnce(problems, who, seen, wanted) {
  for (const k of wanted) {
    const n = seen.get(k) || 0;
    if (n !== 1) problems.push(`${who}: ${k} received ${n} times`);
  }
  const want = new Set(wanted);
  for (const k of seen.keys()) if (!want.has(k)) problems.push(`${who}: unexpected ${k}`);
}

module.exports = { Consumer, Producer, Message, options, hardTimeout, pause, until, drained, run,
  exactlyOnce };
