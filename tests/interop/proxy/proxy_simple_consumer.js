// proxy_simple_consumer.js — RocketMQ 5.x's SimpleConsumer
// (rocketmq-client-nodejs, gRPC) against rmqhost's proxy plugin on the
// store's POP: N messages produced through the proxy are received once each
// with their body, tag, keys and user properties (deliveryAttempt 1); all but
// one are acknowledged; the last one's invisible duration is changed to 1 s
// and it is received again with deliveryAttempt 2, then acknowledged; after
// that nothing comes back. One more message is forwarded to the DLQ
// (ForwardMessageToDeadLetterQueue): it does not come back and a consumer of
// %DLQ%GrpcPopGroup receives it. argv: proxyEndpoint topic N
// stdout: "RESULT ok" or "RESULT fail <why>"
'use strict';
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

const [endpoint, topic, nText] = process.argv.slice(2);
const N = Number(nText);
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 100000).unref();
let shuttingDown = 0;
process.on('uncaughtException', (e) => {
  if (shuttingDown > 0 && e && e.code === 14) return; // see proxy_produce_consume.js
  console.log(`RESULT fail uncaught ${e && e.stack}`);
  process.exit(1);
});

async function receiveUntil(consumer, want, invisibleMs, deadlineMs) {
  const got = [];
  const end = Date.now() + deadlineMs;
  while (got.length < want && Date.now() < end) {
    let msgs = [];
    try {
      msgs = await consumer.receive(16, invisibleMs);
    } catch (e) {
      if (!/MESSAGE_NOT_FOUND|no new message/i.test(String(e && (e.message || e)))) throw e;
    }
    got.push(...msgs);
    if (msgs.length === 0) await new Promise(r => setTimeout(r, 100));
  }
  return got;
}

(async () => {
  const producer = new Producer({ endpoints: endpoint, namespace: '', topic, logger: quiet });
  await producer.startup();
  for (let i = 0; i < N; i++) {
    await producer.send({ topic, tag: `Tag${i % 2}`, keys: [`key-${i}`],
      body: Buffer.from(`pop-body-${i}`), properties: new Map([['idx', String(i)]]) });
  }
  const consumer = new SimpleConsumer({ endpoints: endpoint, namespace: '',
    // Java's proxy long-polls at least 5 s and refuses a shorter deadline
    consumerGroup: 'GrpcPopGroup', subscriptions: new Map([[topic, '*']]),
    awaitDuration: 5000, logger: quiet });
  await consumer.startup();
  const problems = [];
  const first = await receiveUntil(consumer, N, 60000, 30000);
  const seen = new Map();
  for (const m of first) {
    const i = Number(m.properties.get('idx'));
    seen.set(i, (seen.get(i) || 0) + 1);
    if (m.body.toString() !== `pop-body-${i}`) problems.push(`idx ${i} body ${m.body}`);
    if (m.tag !== `Tag${i % 2}`) problems.push(`idx ${i} tag ${m.tag}`);
    if (!m.keys.includes(`key-${i}`)) problems.push(`idx ${i} keys ${m.keys}`);
    if (m.deliveryAttempt !== 1) problems.push(`idx ${i} deliveryAttempt ${m.deliveryAttempt}`);
  }
  for (let i = 0; i < N; i++) if (seen.get(i) !== 1) problems.push(`idx ${i} received ${seen.get(i) || 0} times`);
  let last = null;
  for (const m of first) {
    if (Number(m.properties.get('idx')) === N - 1) last = m;
    else await consumer.ack(m);
  }
  if (last) {
    await consumer.changeInvisibleDuration(last, 1000);
    const again = await receiveUntil(consumer, 1, 60000, 30000);
    if (again.length !== 1) problems.push(`after the change ${again.length} messages came back`);
    else {
      const m = again[0];
      if (Number(m.properties.get('idx')) !== N - 1) problems.push(`came back: idx ${m.properties.get('idx')}`);
      if (m.deliveryAttempt !== 2) problems.push(`came back with deliveryAttempt ${m.deliveryAttempt}`);
      await consumer.ack(m);
    }
  }
  const after = await receiveUntil(consumer, 1, 1000, 2500);
  if (after.length) problems.push(`${after.length} messages came back after every ack`);

  // ForwardMessageToDeadLetterQueue with the client's own generated stubs
  await producer.send({ topic, tag: 'Dlq', keys: ['dlq-key'], body: Buffer.from('dlq-body'),
    properties: new Map([['idx', 'dlq']]) });
  const toDlq = await receiveUntil(consumer, 1, 1000, 30000);
  if (toDlq.length !== 1) problems.push(`dlq message received ${toDlq.length} times`);
  else {
    const grpc = require('@grpc/grpc-js');
    const svc = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_pb');
    const def = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');
    const { MessagingServiceClient } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_grpc_pb');
    const raw = new MessagingServiceClient(endpoint, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set('x-mq-client-id', 'raw-dlq-client');
    const m = toDlq[0];
    const req = new svc.ForwardMessageToDeadLetterQueueRequest()
      .setGroup(new def.Resource().setName('GrpcPopGroup'))
      .setTopic(new def.Resource().setName(topic))
      .setReceiptHandle(m.receiptHandle).setMessageId(m.messageId)
      .setDeliveryAttempt(m.deliveryAttempt).setMaxDeliveryAttempts(16);
    const st = await new Promise((resolve) => raw.forwardMessageToDeadLetterQueue(req, md,
      (e, r) => resolve(e ? `error ${e.code}` : r.getStatus().getCode())));
    raw.close();
    if (st !== def.Code.OK) problems.push(`ForwardMessageToDeadLetterQueue: ${st}`);
    const back = await receiveUntil(consumer, 1, 1000, 2500);
    if (back.length) problems.push('the forwarded message came back');
    // the DLQ topic's route reaches the NameServer shortly after its creation
    const dlqTopic = '%DLQ%GrpcPopGroup';
    let dlqConsumer = null;
    const end = Date.now() + 30000;
    while (!dlqConsumer && Date.now() < end) {
      const c = new SimpleConsumer({ endpoints: endpoint, namespace: '', consumerGroup: 'GrpcDlqReader',
        subscriptions: new Map([[dlqTopic, '*']]), awaitDuration: 5000, logger: quiet });
      try { await c.startup(); dlqConsumer = c; } catch (e) { await new Promise(r => setTimeout(r, 500)); }
    }
    if (!dlqConsumer) problems.push('no route to the DLQ topic');
    else {
      const dead = await receiveUntil(dlqConsumer, 1, 60000, 30000);
      if (dead.length !== 1 || dead[0].body.toString() !== 'dlq-body')
        problems.push(`DLQ holds ${dead.map(d => d.body.toString())}`);
      shuttingDown++;
      await dlqConsumer.shutdown();
    }
  }
  shuttingDown++;
  await consumer.shutdown();
  await producer.shutdown();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.log(`RESULT fail ${e && (e.stack || e)}`); process.exit(1); });
