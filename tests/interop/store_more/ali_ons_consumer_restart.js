// A consumer group survives a consumer restart: instance A consumes the
// first batch, and once it has handled all of it (nothing pulled but
// unhandled) it closes, which commits its offsets (ali-ons's close()
// persists every queue's offset to the broker). The second batch is sent
// while the group has no consumer. Instance B of the same group must then
// get exactly the second batch: none lost (B starts from the committed
// offsets, not from the queue ends) and none of A's handled messages again.
// argv: nameSrvPort topic N (even; N/2 per batch)
// stdout: "READY", "A <idx>", "B <idx>", "RESULT ..."
'use strict';
const { Consumer, Producer, Message, options, hardTimeout, until, pause, drained, run,
  exactlyOnce } = require('./ali_ons_common');

const [nsPort, topic, nText] = process.argv.slice(2);
const N = Number(nText);
hardTimeout(150000);

run(async problems => {
  const common = options(nsPort);
  const group = 'cg_restart';
  function consumer(name, seen) {
    const c = new Consumer({ ...common, consumerGroup: group, instanceName: name });
    c.on('error', err => console.error(`consumer ${name} error:`, err.message));
    c.subscribe(topic, '*', async msg => {
      const i = Number(msg.properties.idx);
      if (msg.body.toString() !== `restart-${i}`) problems.push(`${name} idx ${i} body ${msg.body}`);
      seen.set(i, (seen.get(i) || 0) + 1);
      console.log(`${name} ${i}`);
    });
    return c;
  }
  const producer = new Producer({ ...common, producerGroup: 'pg_restart', instanceName: 'p' });
  await producer.ready();
  async function sendRange(from, to) {
    for (let i = from; i < to; i++) {
      const m = new Message(topic, 'R', Buffer.from(`restart-${i}`));
      m.properties.idx = String(i);
      const r = await producer.send(m);
      if (r.sendStatus !== 'SEND_OK') problems.push(`send ${i}: ${r.sendStatus}`);
    }
  }
  const half = N / 2;
  const range = (a, b) => Array.from({ length: b - a }, (_, k) => a + k);

  const seenA = new Map();
  const a = consumer('A', seenA);
  await a.ready();
  console.log('READY');
  await sendRange(0, half);
  if (!(await until(() => seenA.size === half && drained(a), 60000)))
    problems.push(`A handled ${seenA.size} of ${half}`);
  await a.close();
  exactlyOnce(problems, 'A', seenA, range(0, half));

  await sendRange(half, N); // nobody of the group is online
  const seenB = new Map();
  const b = consumer('B', seenB);
  await b.ready();
  if (!(await until(() => range(half, N).every(i => seenB.has(i)), 60000)))
    problems.push(`B got ${seenB.size} of the second batch`);
  await pause(1500); // a redelivery would come with the next pulls
  exactlyOnce(problems, 'B', seenB, range(half, N));
  await b.close();
  await producer.close();
});
