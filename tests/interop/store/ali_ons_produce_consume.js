// ali-ons against the all-in-one daemon for test_store_ali_ons: three push
// consumer groups (everything, TAG "TagA", SQL92 "idx >= 30"), then a
// producer sends N messages (tags TagA/TagB alternating, keys, user property
// idx, body). Each group must receive exactly its messages once, with body,
// tags, keys and properties intact.
// argv: nameSrvPort topic N
// stdout: "READY", "SENT <n>", "GOT <group> <idx>", "RESULT ok" or "RESULT fail <why>"
'use strict';
const { Consumer, Producer, Message } = require('ali-ons');

const [nsPort, topic, nText] = process.argv.slice(2);
const N = Number(nText);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 100000).unref();

const common = { httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`, clientIP: '127.0.0.1',
  rebalanceInterval: 1000 };
const groups = {
  all: { sub: '*', want: i => true },
  tag: { sub: 'TagA', want: i => i % 2 === 0 },
  sql: { sub: { expressionType: 'SQL92', subString: 'idx >= 30' }, want: i => i >= 30 },
};
const seen = {};
const problems = [];
const consumers = [];

function check(name, msg) {
  const i = Number(msg.properties.idx);
  const tag = i % 2 === 0 ? 'TagA' : 'TagB';
  if (!groups[name].want(i)) problems.push(`${name} got idx ${i}`);
  if (msg.body.toString() !== `body-${i}`) problems.push(`${name} idx ${i} body ${msg.body}`);
  if (msg.tags !== tag) problems.push(`${name} idx ${i} tags ${msg.tags}`);
  if (msg.keys !== `K${i} order-${i}`) problems.push(`${name} idx ${i} keys ${msg.keys}`);
  if (msg.properties.color !== 'blue') problems.push(`${name} idx ${i} color ${msg.properties.color}`);
  seen[name][i] = (seen[name][i] || 0) + 1;
  console.log(`GOT ${name} ${i}`);
}

function complete() {
  return Object.keys(groups).every(name => {
    for (let i = 0; i < N; i++) if (groups[name].want(i) && !seen[name][i]) return false;
    return true;
  });
}

(async () => {
  for (const name of Object.keys(groups)) {
    seen[name] = {};
    const c = new Consumer({ ...common, consumerGroup: `cg_${name}`, instanceName: `c_${name}` });
    c.on('error', err => console.error(`consumer ${name} error:`, err.message));
    c.subscribe(topic, groups[name].sub, async msg => check(name, msg));
    await c.ready();
    consumers.push(c);
  }
  const producer = new Producer({ ...common, producerGroup: 'pg_store_interop', instanceName: 'p' });
  await producer.ready();
  console.log('READY');
  for (let i = 0; i < N; i++) {
    const m = new Message(topic, i % 2 === 0 ? 'TagA' : 'TagB', Buffer.from(`body-${i}`));
    m.keys = [`K${i}`, `order-${i}`];
    m.properties.idx = String(i);
    m.properties.color = 'blue';
    const r = await producer.send(m);
    if (r.sendStatus !== 'SEND_OK') problems.push(`send ${i}: ${r.sendStatus}`);
  }
  console.log(`SENT ${N}`);
  const deadline = Date.now() + 60000;
  while (!complete() && Date.now() < deadline) await new Promise(r => setTimeout(r, 100));
  // a duplicate would arrive with the next pulls: give them a moment
  await new Promise(r => setTimeout(r, 1500));
  for (const name of Object.keys(groups))
    for (let i = 0; i < N; i++) {
      const n = seen[name][i] || 0;
      if (groups[name].want(i) && n !== 1) problems.push(`${name} idx ${i} received ${n} times`);
    }
  for (const c of consumers) await c.close();
  await producer.close();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(0);
})().catch(err => { console.log(`RESULT fail ${err && err.message}`); process.exit(2); });
