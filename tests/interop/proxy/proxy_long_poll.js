// proxy_long_poll.js — ReceiveMessage long polling through rmqhost's proxy
// (rocketmq-client-nodejs SimpleConsumer, gRPC): a receive started on an
// empty topic is still waiting when a message is produced 2 s later, and
// returns that message; a raw ReceiveMessage on an empty group waits its
// long_polling_timeout and ends with status MESSAGE_NOT_FOUND (40401)
// "no new message", as Java's proxy answers; a poll waiting during a
// reload of the proxy plugin ("POLLING" printed, then a line on stdin once
// the test reloaded it) is ended at once, MESSAGE_NOT_FOUND.
// argv: proxyEndpoint topic
// stdout: "RESULT ok" or "RESULT fail <why>"
'use strict';
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

const [endpoint, topic] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 100000).unref();
let shuttingDown = 0;
process.on('uncaughtException', (e) => {
  if (shuttingDown > 0 && e && e.code === 14) return; // see proxy_produce_consume.js
  console.log(`RESULT fail uncaught ${e && e.stack}`);
  process.exit(1);
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A raw ReceiveMessage with the client's generated stubs: every status it
// streams, and how long the stream took.
function rawReceive(group, pollMs, deadlineMs) {
  const grpc = require('@grpc/grpc-js');
  const svc = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_pb');
  const def = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');
  const { Duration } = require('google-protobuf/google/protobuf/duration_pb');
  const { MessagingServiceClient } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_grpc_pb');
  const raw = new MessagingServiceClient(endpoint, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'raw-long-poll-client');
  const req = new svc.ReceiveMessageRequest()
    .setGroup(new def.Resource().setName(group))
    .setMessageQueue(new def.MessageQueue().setTopic(new def.Resource().setName(topic)))
    .setFilterExpression(new def.FilterExpression().setType(def.FilterType.TAG).setExpression('*'))
    .setBatchSize(16).setInvisibleDuration(new Duration().setSeconds(30))
    .setLongPollingTimeout(new Duration().setSeconds(Math.floor(pollMs / 1000)));
  const started = Date.now();
  return new Promise((resolve) => {
    const statuses = [];
    let messages = 0;
    const s = raw.receiveMessage(req, md, { deadline: Date.now() + deadlineMs });
    s.on('data', (r) => {
      if (r.hasStatus()) statuses.push(`${r.getStatus().getCode()} ${r.getStatus().getMessage()}`);
      if (r.hasMessage()) messages++;
    });
    s.on('error', (e) => statuses.push(`grpc error ${e.code} ${e.details}`));
    s.on('end', () => { raw.close(); resolve({ statuses, messages, took: Date.now() - started }); });
  });
}

(async () => {
  const problems = [];
  const producer = new Producer({ endpoints: endpoint, namespace: '', topic, logger: quiet });
  await producer.startup();
  const consumer = new SimpleConsumer({ endpoints: endpoint, namespace: '',
    consumerGroup: 'GrpcLongPollGroup', subscriptions: new Map([[topic, '*']]),
    awaitDuration: 15000, logger: quiet });
  await consumer.startup();

  // 1. nothing in the topic yet: the poll ends at its long_polling_timeout
  // with MESSAGE_NOT_FOUND, not at once
  const empty = await rawReceive('GrpcLongPollEmpty', 5000, 10000);
  if (empty.statuses.join('|') !== '40401 no new message' || empty.messages !== 0)
    problems.push(`empty poll answered ${empty.statuses.join('|')} with ${empty.messages} messages`);
  if (empty.took < 4500) problems.push(`empty poll ended after ${empty.took} ms, before its 5 s`);


  // 2. a receive waits for a message produced after it started
  let pending = true;
  const receiving = consumer.receive(16, 30000).finally(() => { pending = false; });
  await sleep(2000);
  const pendingAtSend = pending;
  await producer.send({ topic, tag: 'Late', body: Buffer.from('late-body') });
  const got = await receiving;
  if (!pendingAtSend) problems.push('the receive had ended before the message was sent');
  if (got.length !== 1 || got[0].body.toString() !== 'late-body')
    problems.push(`the waiting receive got ${got.map((m) => m.body.toString())}`);
  for (const m of got) await consumer.ack(m);

  shuttingDown++;
  await consumer.shutdown();
  await producer.shutdown();

  // 3. a poll waiting while the test reloads the proxy plugin: the old
  // generation's quiesce ends it with MESSAGE_NOT_FOUND long before its 20 s
  // (the client polls again, reaching the new generation)
  const waiting = rawReceive('GrpcLongPollGroup', 20000, 30000); // it acked all there is
  await sleep(1000);
  console.log('POLLING');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const cut = await waiting;
  if (cut.statuses.join('|') !== '40401 no new message' || cut.took >= 15000)
    problems.push(`poll across a reload: ${cut.statuses.join('|')} after ${cut.took} ms`);
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.log(`RESULT fail ${e && (e.stack || e)}`); process.exit(1); });
