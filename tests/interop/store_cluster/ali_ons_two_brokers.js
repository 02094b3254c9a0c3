// ali-ons against two brokers of one cluster for test_store_cluster_ali_ons:
// two push consumers of one group (instances c1, c2) wait until the group's
// queues are split between them, then a producer sends N messages (spread by
// ali-ons over the queues of both brokers). Together the consumers must
// receive each message exactly once with its body; the distribution per
// broker and per consumer is printed.
// argv: nameSrvPort topic N
// stdout: "READY", "SENT <n>", "DIST <consumer> <broker> <count>",
//         "RESULT ok" or "RESULT fail <why>"
'use strict';
const { Consumer, Producer, Message } = require('ali-ons');

const [nsPort, topic, nText] = process.argv.slice(2);
const N = Number(nText);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 150000).unref();

const common = { httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`, clientIP: '127.0.0.1',
  rebalanceInterval: 1000 };
const seen = {};
const dist = {};
const problems = [];
const sleep = ms => new Promise(r => setTimeout(r, ms));

function queuesOf(c) {
  return [...c._processQueueTable.keys()].filter(k => k.includes(topic) && !k.includes('%RETRY%'));
}

(async () => {
  const consumers = [];
  for (const name of ['c1', 'c2']) {
    const c = new Consumer({ ...common, consumerGroup: 'cg_cluster', instanceName: name });
    c.on('error', err => console.error(`consumer ${name} error:`, err.message));
    c.subscribe(topic, '*', async (msg, mq) => {
      const m = /^body-(\d+)-x+$/.exec(msg.body.toString());
      if (!m) { problems.push(`${name} bad body ${msg.body}`); return; }
      const i = Number(m[1]);
      if (msg.body.length !== `body-${i}-`.length + (i % 17) + 1)
        problems.push(`${name} idx ${i} body length ${msg.body.length}`);
      seen[i] = (seen[i] || 0) + 1;
      const key = `${name} ${mq.brokerName}`;
      dist[key] = (dist[key] || 0) + 1;
    });
    await c.ready();
    consumers.push(c);
  }
  // the group's 8 queues split between the two consumers before any message
  let deadline = Date.now() + 60000;
  for (;;) {
    const a = queuesOf(consumers[0]), b = queuesOf(consumers[1]);
    const union = new Set([...a, ...b]);
    if (a.length > 0 && b.length > 0 && union.size === 8 && a.length + b.length === 8) break;
    if (Date.now() > deadline) throw new Error(`rebalance did not settle: ${a} | ${b}`);
    await sleep(100);
  }
  const producer = new Producer({ ...common, producerGroup: 'pg_cluster', instanceName: 'p' });
  await producer.ready();
  console.log('READY');
  const sentTo = {};
  for (let i = 0; i < N; i++) {
    const m = new Message(topic, 'TagC', Buffer.from(`body-${i}-${'x'.repeat(i % 17 + 1)}`));
    const r = await producer.send(m);
    if (r.sendStatus !== 'SEND_OK') problems.push(`send ${i}: ${r.sendStatus}`);
    else sentTo[r.messageQueue.brokerName] = (sentTo[r.messageQueue.brokerName] || 0) + 1;
  }
  console.log(`SENT ${N} ${JSON.stringify(sentTo)}`);
  deadline = Date.now() + 60000;
  const complete = () => { for (let i = 0; i < N; i++) if (!seen[i]) return false; return true; };
  while (!complete() && Date.now() < deadline) await sleep(100);
  // a duplicate would arrive with the next pulls: give them a moment
  await sleep(1500);
  for (let i = 0; i < N; i++)
    if ((seen[i] || 0) !== 1) problems.push(`idx ${i} received ${seen[i] || 0} times`);
  for (const k of Object.keys(dist)) console.log(`DIST ${k} ${dist[k]}`);
  for (const c of consumers) await c.close();
  await producer.close();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(0);
})().catch(err => { console.log(`RESULT fail ${err && err.message}`); process.exit(2); });
