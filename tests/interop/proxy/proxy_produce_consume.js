// proxy_produce_consume.js — a RocketMQ 5.x client (rocketmq-client-nodejs,
// gRPC) produces through rmqhost's proxy plugin and a 4.x client (ali-ons,
// remoting) consumes what it produced from the same daemon: every message
// must arrive once with its body, tag, keys and user properties; the send
// receipts must carry the message ids the 5.x client made. Also checks the
// proxy's answer for a topic that does not exist, and a timer message
// (delivery_timestamp) arriving once after its time.
// argv: proxyEndpoint nameSrvPort topic N [tls]
// stdout: "READY", "SENT <i> <messageId>", "GOT <i>", "RESULT ok" or
// "RESULT fail <why>"
'use strict';
const { Producer } = require('rocketmq-client-nodejs');
const { Consumer } = require('ali-ons');

const [endpoint, nsPort, topic, nText, mode] = process.argv.slice(2);
const N = Number(nText);
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 100000).unref();

const problems = [];
// rocketmq-client-nodejs 1.0.8's TelemetrySession.release() ends its stream
// and removes every listener before the server's trailers can arrive; when
// the client then closes its channel, grpc-js emits UNAVAILABLE "Connection
// dropped" on that stream with nobody listening, which kills the process.
// Only that error, only after a shutdown began, is tolerated (and counted).
let shuttingDown = 0;
let droppedAfterShutdown = 0;
process.on('uncaughtException', (e) => {
  if (shuttingDown > 0 && e && e.code === 14 && /Connection dropped/.test(String(e.details))) {
    droppedAfterShutdown++;
    return;
  }
  console.log(`RESULT fail uncaught ${e && e.stack}`);
  process.exit(1);
});
const sent = new Map(); // idx -> messageId
const got = new Map(); // idx -> count
let timerAt = -1; // delivery time of the timer message (idx N)

function check(msg) {
  const i = Number(msg.properties.idx);
  if (msg.body.toString() !== `grpc-body-${i}`) problems.push(`idx ${i} body ${msg.body}`);
  if (msg.tags !== (i % 2 === 0 ? 'TagA' : 'TagB')) problems.push(`idx ${i} tags ${msg.tags}`);
  if (msg.keys !== `K${i} order-${i}`) problems.push(`idx ${i} keys ${msg.keys}`);
  if (msg.properties.color !== 'green') problems.push(`idx ${i} color ${msg.properties.color}`);
  // the 5.x client's message id is the UNIQ_KEY the 4.x client reads as msgId
  if (sent.has(i) && msg.properties.UNIQ_KEY !== sent.get(i)) problems.push(`idx ${i} UNIQ_KEY ${msg.properties.UNIQ_KEY} != ${sent.get(i)}`);
  if (i === N) {
    // the timer message: TIMER_DELIVER_MS as sent, stored at or after its time
    // (Java's rounding: TIMER_OUT_MS is the second before, or the one it is in)
    const out = Number(msg.properties.TIMER_OUT_MS);
    if (Number(msg.properties.TIMER_DELIVER_MS) !== timerAt) problems.push(`timer TIMER_DELIVER_MS ${msg.properties.TIMER_DELIVER_MS} != ${timerAt}`);
    if (!(out <= timerAt && out > timerAt - 1000 - 1)) problems.push(`timer TIMER_OUT_MS ${out} for ${timerAt}`);
    if (!(Number(msg.storeTimestamp) >= out)) problems.push(`timer stored at ${msg.storeTimestamp}, before ${out}`);
  }
  got.set(i, (got.get(i) || 0) + 1);
  console.log(`GOT ${i}`);
}

(async () => {
  const httpclient = { request() { throw new Error('no address server'); } };
  const consumer = new Consumer({ httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`,
    clientIP: '127.0.0.1', rebalanceInterval: 1000, consumerGroup: 'cg_from_grpc',
    instanceName: 'c_grpc' });
  consumer.on('error', (err) => console.error('consumer error:', err.message));
  consumer.subscribe(topic, '*', async (msg) => check(msg));
  await consumer.ready();

  const producer = new Producer({ endpoints: endpoint, namespace: '', topic, logger: quiet,
    sslEnabled: mode === 'tls', requestTimeout: 5000 });
  await producer.startup();
  console.log('READY');
  for (let i = 0; i < N; i++) {
    const receipt = await producer.send({
      topic, tag: i % 2 === 0 ? 'TagA' : 'TagB', keys: [`K${i}`, `order-${i}`],
      properties: new Map([['idx', String(i)], ['color', 'green']]),
      body: Buffer.from(`grpc-body-${i}`),
    });
    if (!receipt.messageId) problems.push(`idx ${i}: no message id in the receipt`);
    sent.set(i, receipt.messageId);
    console.log(`SENT ${i} ${receipt.messageId} ${receipt.offset}`);
  }

  // a topic nobody created: the proxy answers TOPIC_NOT_FOUND
  const lost = new Producer({ endpoints: endpoint, namespace: '', logger: quiet,
    sslEnabled: mode === 'tls', requestTimeout: 5000 });
  await lost.startup();
  try {
    await lost.send({ topic: 'NoSuchTopicForGrpc', body: Buffer.from('x') });
    problems.push('send to a missing topic succeeded');
  } catch (e) {
    const code = e.code;
    if (code !== 40402) problems.push(`missing topic: code ${code} (${e.message})`);
  }
  shuttingDown++;
  await lost.shutdown();

  // raw RPCs with the client's own generated stubs: QueryAssignment as Java
  // answers a non-orderly group, ReceiveMessage's BAD_REQUEST, an RPC not
  // implemented yet UNIMPLEMENTED
  const grpc = require('@grpc/grpc-js');
  const svc = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_pb');
  const def = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');
  const { MessagingServiceClient } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_grpc_pb');
  const raw = new MessagingServiceClient(endpoint, mode === 'tls'
    ? grpc.credentials.createSsl(require('fs').readFileSync(process.env.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH))
    : grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'raw-client');
  const [host, port] = endpoint.split(':');
  const eps = new def.Endpoints().setScheme(def.AddressScheme.IPV4);
  eps.addAddresses(new def.Address().setHost(host).setPort(Number(port)));
  const qa = new svc.QueryAssignmentRequest()
    .setTopic(new def.Resource().setName(topic))
    .setGroup(new def.Resource().setName('cg_simple'))
    .setEndpoints(eps);
  const qaResp = await new Promise((resolve) => raw.queryAssignment(qa, md, (e, r) => resolve(e || r)));
  if (qaResp instanceof Error) problems.push(`QueryAssignment: ${qaResp.message}`);
  else {
    const o = qaResp.toObject();
    const a = o.assignmentsList;
    if (o.status.code !== def.Code.OK || o.status.message !== 'OK') problems.push(`QueryAssignment status ${JSON.stringify(o.status)}`);
    else if (a.length !== 1 || a[0].messageQueue.id !== -1 || a[0].messageQueue.broker.name !== 'broker-g' ||
        a[0].messageQueue.permission !== def.Permission.READ_WRITE ||
        a[0].messageQueue.broker.endpoints.addressesList[0].port !== Number(port)) {
      problems.push(`QueryAssignment answer ${JSON.stringify(a)}`);
    }
  }
  // ReceiveMessage without a message queue: a BAD_REQUEST status on the
  // stream (proxy_simple_consumer.js receives for real)
  const rcv = new svc.ReceiveMessageRequest().setGroup(new def.Resource().setName('cg_simple'));
  const rcvStatus = await new Promise((resolve) => {
    let status = null;
    const st = raw.receiveMessage(rcv, md);
    st.on('data', (r) => { if (r.hasStatus()) status = r.getStatus().getCode(); });
    st.on('error', (e) => resolve(`error ${e.code}`));
    st.on('end', () => resolve(status));
  });
  if (rcvStatus !== def.Code.BAD_REQUEST) problems.push(`ReceiveMessage without a queue: ${rcvStatus}`);
  // EndTransaction without a transaction id: Java's INVALID_TRANSACTION_ID
  const end = new svc.EndTransactionRequest().setTopic(new def.Resource().setName(topic));
  const code = await new Promise((resolve) => raw.endTransaction(end, md, (e, r) => resolve(e
    ? `error ${e.code}` : `${r.getStatus().getCode()} ${r.getStatus().getMessage()}`)));
  if (code !== `${def.Code.INVALID_TRANSACTION_ID} transaction id cannot be empty`)
    problems.push(`EndTransaction: ${code}`);

  // a timer message (delivery_timestamp, 2 s ahead) through a raw SendMessage
  // (the client itself refuses DELAY on a NORMAL-only topic): the store holds
  // it until its time, then the 4.x consumer gets it once as message N
  const { Timestamp } = require('google-protobuf/google/protobuf/timestamp_pb');
  const at = Date.now() + 2000;
  const timerId = '01C0A8000100000000000000000000FF';
  const sysp = new def.SystemProperties().setMessageId(timerId).setTag(N % 2 === 0 ? 'TagA' : 'TagB')
    .setBodyEncoding(def.Encoding.IDENTITY).setMessageType(def.MessageType.DELAY)
    .setBornTimestamp(Timestamp.fromDate(new Date())).setBornHost('127.0.0.1')
    .setDeliveryTimestamp(Timestamp.fromDate(new Date(at)));
  sysp.addKeys(`K${N}`);
  sysp.addKeys(`order-${N}`);
  const tm = new def.Message().setTopic(new def.Resource().setName(topic)).setSystemProperties(sysp)
    .setBody(Buffer.from(`grpc-body-${N}`));
  tm.getUserPropertiesMap().set('idx', String(N)).set('color', 'green');
  const smReq = new svc.SendMessageRequest();
  smReq.addMessages(tm); // (add returns the element, not the request)
  const smResp = await new Promise((resolve) => raw.sendMessage(smReq, md, (e, r) => resolve(e || r)));
  if (smResp instanceof Error) problems.push(`timer SendMessage: ${smResp.message}`);
  else if (smResp.toObject().status.code !== def.Code.OK) problems.push(`timer SendMessage status ${JSON.stringify(smResp.toObject().status)}`);
  else sent.set(N, timerId);
  timerAt = at;
  raw.close();

  const deadline = Date.now() + 60000;
  while (Date.now() < deadline && got.size < N + 1) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 1000)); // a duplicate would show up meanwhile
  for (let i = 0; i <= N; i++) {
    if (!got.has(i)) problems.push(`idx ${i} never consumed`);
    else if (got.get(i) !== 1) problems.push(`idx ${i} consumed ${got.get(i)} times`);
  }
  shuttingDown++;
  await producer.shutdown();
  await consumer.close();
  if (droppedAfterShutdown) console.error(`client-side telemetry race after shutdown: ${droppedAfterShutdown}`);
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(0);
})().catch((e) => { console.log(`RESULT fail exception ${e && e.stack}`); process.exit(1); });
