// Ordered queues as far as ali-ons goes: it has no orderly consumer (no
// queue locks), but its producer routes a message with a shardingKey to one
// queue (md5 of the key), and its push consumer handles one queue's messages
// one at a time in pull order. So every key's messages must come from the
// queue the broker reported at send time, in send order, with increasing
// queue offsets: the store keeps each queue FIFO and the queue the client
// chose.
// argv: nameSrvPort topic perKey (the topic has 4 queues)
// stdout: "READY", "GOT <key> <seq>", "RESULT ..."
'use strict';
const crypto = require('crypto');
const { Consumer, Producer, Message, options, hardTimeout, until, pause, run } =
  require('./ali_ons_common');

const [nsPort, topic, perKeyText] = process.argv.slice(2);
const perKey = Number(perKeyText);
// ali-ons 3.12.0 bug: a key whose md5 picks queue id 0 is sent round robin
// (`if (queueId && ...)` treats queue 0 as no choice), so only keys picking
// another queue of the topic's 4 are used
const keys = [];
for (let n = 0; keys.length < 5; n++) {
  const k = `order-${n}`;
  if (crypto.createHash('md5').update(k).digest().readUInt32BE() % 4 !== 0) keys.push(k);
}
hardTimeout(150000);

run(async problems => {
  const common = options(nsPort);
  const got = new Map(keys.map(k => [k, []])); // key -> [{seq, queueId, queueOffset}]
  const consumer = new Consumer({ ...common, consumerGroup: 'cg_order', instanceName: 'c' });
  consumer.on('error', err => console.error('consumer error:', err.message));
  consumer.subscribe(topic, '*', async msg => {
    const k = msg.properties.key;
    const seq = Number(msg.properties.seq);
    if (msg.body.toString() !== `${k}#${seq}`) problems.push(`${k} ${seq} body ${msg.body}`);
    got.get(k).push({ seq, queueId: Number(msg.queueId), queueOffset: Number(msg.queueOffset) });
    console.log(`GOT ${k} ${seq}`);
  });
  await consumer.ready();
  const producer = new Producer({ ...common, producerGroup: 'pg_order', instanceName: 'p' });
  await producer.ready();
  console.log('READY');
  const sentQueue = new Map();
  for (let seq = 0; seq < perKey; seq++)
    for (const k of keys) { // keys interleaved, as concurrent orders would be
      const m = new Message(topic, 'O', Buffer.from(`${k}#${seq}`));
      m.shardingKey = k;
      m.properties.key = k;
      m.properties.seq = String(seq);
      const r = await producer.send(m);
      if (r.sendStatus !== 'SEND_OK') problems.push(`send ${k} ${seq}: ${r.sendStatus}`);
      const q = Number(r.messageQueue.queueId); // a header field: a string
      if (sentQueue.has(k) && sentQueue.get(k) !== q) problems.push(`${k} sent to queues ${sentQueue.get(k)} and ${q}`);
      sentQueue.set(k, q);
    }
  if (!(await until(() => keys.every(k => got.get(k).length >= perKey), 60000)))
    problems.push(`got ${keys.map(k => got.get(k).length).join('/')} of ${perKey} per key`);
  await pause(1500); // a duplicate would come with the next pulls
  for (const k of keys) {
    const list = got.get(k);
    if (list.length !== perKey) problems.push(`${k}: ${list.length} deliveries for ${perKey} sends`);
    list.forEach((d, n) => {
      if (d.seq !== n) problems.push(`${k}: delivery ${n} is seq ${d.seq}`);
      if (d.queueId !== sentQueue.get(k)) problems.push(`${k} seq ${d.seq} from queue ${d.queueId}, sent to ${sentQueue.get(k)}`);
      if (n && d.queueOffset <= list[n - 1].queueOffset) problems.push(`${k}: queue offsets not increasing`);
    });
  }
  if (new Set(sentQueue.values()).size < 2) problems.push('all keys hashed to one queue: the test proves little');
  await consumer.close();
  await producer.close();
});
