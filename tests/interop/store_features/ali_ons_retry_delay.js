// ali-ons producer + push consumer for test_store_features_ali_ons: a
// message the listener refuses (ACTION_RETRY) every time, and a message
// sent with a delay level.
// argv: nameSrvPort topic group maxReconsumeTimes delayLevel
// stdout: "READY", "SENT <tag> <msgId>", "GOT <tag> <reconsumeTimes> <storeTs-bornTs>", "CLOSED"
// stdin:  "close"
'use strict';
const readline = require('readline');
const { Consumer, Producer, Message } = require('ali-ons');

const [nsPort, topic, group, maxTimes, delayLevel] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };
setTimeout(() => { console.error('ali_ons_retry_delay: hard timeout'); process.exit(3); }, 120000).unref();

const common = { httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`, clientIP: '127.0.0.1' };
const producer = new Producer({ ...common, producerGroup: `${group}_P`, instanceName: 'p1' });
const consumer = new Consumer({ ...common, consumerGroup: group, instanceName: 'c1',
  maxReconsumeTimes: Number(maxTimes), rebalanceInterval: 1000 });
consumer.on('error', err => { if (!/reconsume later/.test(err.message)) console.error('consumer error:', err.message); });

(async () => {
  await producer.ready();
  const r = await producer.send(new Message(topic, 'retry', Buffer.from('refused body')));
  console.log(`SENT retry ${r.msgId}`);
  const d = new Message(topic, 'delayed', Buffer.from('delayed body'));
  d.delayTimeLevel = Number(delayLevel);
  const rd = await producer.send(d);
  console.log(`SENT delayed ${rd.msgId}`);
  consumer.subscribe(topic, '*', async msg => {
    console.log(`GOT ${msg.tags} ${msg.reconsumeTimes} ${msg.storeTimestamp - msg.bornTimestamp} ${msg.body.toString()}`);
    // a throw, not ACTION_RETRY: ali-ons' %RETRY% wrapper drops the handler's return value
    if (msg.tags === 'retry') throw new Error('reconsume later');
  });
  await consumer.ready();
  console.log('READY');
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (line.trim() === 'close') break;
  }
  await consumer.close();
  await producer.close();
  console.log('CLOSED');
  process.exit(0);
})().catch(err => { console.error('ali_ons_retry_delay failed:', err); process.exit(2); });
