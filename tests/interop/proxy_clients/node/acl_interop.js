// acl_interop.js — RocketMQ 5.x's Node.js client (rocketmq-client-nodejs)
// with credentials against rmqhost's proxy plugin while the acl plugin
// guards the broker (run_acl_node.sh writes the plain_acl.yml); the proxy
// asks the acl plugin (service "acl.check") about every gRPC call.
//   - the right AccessKey/SecretKey: a producer sends N messages to a topic
//     the account may PUB|SUB, a SimpleConsumer of a group it may SUB
//     receives and acknowledges each exactly once;
//   - a wrong secret: no message gets through; the proxy answers
//     UNAUTHORIZED (40100) "Check signature failed for accessKey=<AK>" (in
//     the client's error, or — when the client only says it has no route —
//     in a raw QueryRoute through the client's own stubs, signed as it signs);
//   - an account whose groups lack SUB: the SimpleConsumer is refused
//     UNAUTHORIZED (40100) "No default permission for group:<G>" (the client
//     fails at its startup: the proxy answers its Telemetry Settings, which
//     name the group, with that status), and a
//     ReceiveMessage made raw with that account is refused the same way.
// argv: endpoint mode(plain|tls) ak sk topic group noSubAk noSubSk N
// (tls: the client trusts the certificate GRPC_DEFAULT_SSL_ROOTS_FILE_PATH
// names). stdout: "RESULT ok" or "RESULT fail <why>"
'use strict';
const crypto = require('crypto');
const { Producer, SimpleConsumer } = require('rocketmq-client-nodejs');

const [endpoint, mode, ak, sk, topic, group, noSubAk, noSubSk, nText] = process.argv.slice(2);
const N = Number(nText);
const tls = mode === 'tls';
const quiet = { info() {}, debug() {}, warn() {}, error() {} };
setTimeout(() => { console.log('RESULT fail hard timeout'); process.exit(3); }, 150000).unref();
const problems = [];
const problem = (p) => { console.log(`problem: ${p}`); problems.push(p); };
// rocketmq-client-nodejs 1.0.8 drops its Telemetry stream's listeners
// before the trailers arrive (see tests/interop/proxy/proxy_produce_consume.js):
// only UNAVAILABLE after a shutdown began is tolerated.
let shuttingDown = 0;
process.on('uncaughtException', (e) => {
  if (shuttingDown > 0 && e && e.code === 14) return;
  console.log(`RESULT fail uncaught ${e && e.stack}`);
  process.exit(1);
});
const text = (e) => String(e && (e.stack || e.message || e));
const creds = (a, s) => ({ accessKey: a, accessSecret: s });
const base = (a, s) => ({ endpoints: endpoint, namespace: '', logger: quiet, sslEnabled: tls,
  requestTimeout: 5000, sessionCredentials: creds(a, s) });

// The client's generated stubs, and metadata signed as BaseClient signs.
const grpc = require('@grpc/grpc-js');
const svc = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_pb');
const def = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/definition_pb');
const { MessagingServiceClient } = require('rocketmq-client-nodejs/proto/apache/rocketmq/v2/service_grpc_pb');
function rawStub() {
  return new MessagingServiceClient(endpoint,
    tls ? grpc.credentials.createSsl() : grpc.credentials.createInsecure());
}
function signed(a, s) {
  const now = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const sig = crypto.createHmac('sha1', s).update(now).digest('hex').toUpperCase();
  const md = new grpc.Metadata();
  md.set('x-mq-client-id', 'node-acl-raw');
  md.set('x-mq-client-version', '5.0.0');
  md.set('x-mq-date-time', now);
  md.set('authorization', `MQv2-HMAC-SHA1 Credential=${a}, SignedHeaders=x-mq-date-time, Signature=${sig}`);
  return md;
}

// ReceiveMessage made raw: the status of its first response.
async function rawReceive(a, s, t, g) {
  const raw = rawStub();
  const req = new svc.ReceiveMessageRequest().setGroup(new def.Resource().setName(g))
    .setMessageQueue(new def.MessageQueue().setTopic(new def.Resource().setName(t)).setId(-1))
    .setFilterExpression(new def.FilterExpression().setType(def.FilterType.TAG).setExpression('*'))
    .setBatchSize(1).setAutoRenew(false)
    .setInvisibleDuration(new (require('google-protobuf/google/protobuf/duration_pb').Duration)().setSeconds(30))
    .setLongPollingTimeout(new (require('google-protobuf/google/protobuf/duration_pb').Duration)().setSeconds(5));
  const st = await new Promise((resolve) => {
    let first = null;
    const call = raw.receiveMessage(req, signed(a, s), { deadline: Date.now() + 20000 });
    call.on('data', (r) => {
      if (!first && r.hasStatus()) first = { code: r.getStatus().getCode(), message: r.getStatus().getMessage() };
    });
    call.on('error', (e) => resolve(first || { code: `grpc error ${e.code}`, message: e.details }));
    call.on('end', () => resolve(first || { code: 'no status', message: '' }));
  });
  raw.close();
  return st;
}

// QueryRoute made raw: its status.
async function rawRoute(a, s, t) {
  const raw = rawStub();
  const md = signed(a, s);
  const [host, port] = [endpoint.slice(0, endpoint.lastIndexOf(':')), Number(endpoint.slice(endpoint.lastIndexOf(':') + 1))];
  const req = new svc.QueryRouteRequest().setTopic(new def.Resource().setName(t))
    .setEndpoints(new def.Endpoints().setScheme(def.AddressScheme.IPV4)
      .setAddressesList([new def.Address().setHost(host).setPort(port)]));
  const st = await new Promise((resolve) => raw.queryRoute(req, md, { deadline: Date.now() + 10000 },
    (e, r) => resolve(e ? { code: `grpc error ${e.code}`, message: e.details } :
      { code: r.getStatus().getCode(), message: r.getStatus().getMessage() })));
  raw.close();
  return st;
}

// The client's refusal: code 40100 and `want` in its error.
function refusedAs(what, e, want) {
  const s = text(e);
  if (!/40100|UNAUTHORIZED/.test(s) || !s.includes(want)) return false;
  console.log(`${what}: refused as expected (${s.split('\n')[0]})`);
  return true;
}

async function wrongSecret() {
  const what = 'wrong secret key';
  const want = `Check signature failed for accessKey=${ak}`;
  const producer = new Producer({ ...base(ak, `${sk}-wrong`), topic });
  let err = null;
  try {
    await producer.startup();
    await producer.send({ topic, body: Buffer.from('must-not-pass') });
    problem(`${what}: the send succeeded`);
  } catch (e) { err = e; }
  shuttingDown++;
  try { await producer.shutdown(); } catch (e) { /* it never started */ }
  if (!err || refusedAs(what, err, want)) return;
  console.log(`${what}: the client says ${text(err).split('\n')[0]}; a raw QueryRoute shows the answer`);
  const st = await rawRoute(ak, `${sk}-wrong`, topic);
  if (st.code !== 40100 || !String(st.message).includes(want))
    problem(`${what}: raw QueryRoute ${st.code} '${st.message}', wanted 40100 '${want}'`);
  else console.log(`${what} (raw QueryRoute): ${st.code} ${st.message}`);
}

async function receiveRefused() {
  const what = 'receive with an account lacking SUB on the group';
  const want = `No default permission for group:${group}`;
  const consumer = new SimpleConsumer({ ...base(noSubAk, noSubSk), consumerGroup: group,
    subscriptions: new Map([[topic, '*']]), awaitDuration: 5000 });
  let err = null;
  try {
    await consumer.startup();
    const msgs = await consumer.receive(16, 30000);
    problem(`${what}: receive answered ${msgs.length} messages`);
  } catch (e) { err = e; }
  shuttingDown++;
  try { await consumer.shutdown(); } catch (e) { /* ignore */ }
  if (err && !refusedAs(what, err, want)) problem(`${what}: ${text(err)}, wanted 40100 '${want}'`);
  const st = await rawReceive(noSubAk, noSubSk, topic, group);
  if (st.code !== 40100 || !String(st.message).includes(want))
    problem(`raw ReceiveMessage lacking SUB on the group: ${st.code} '${st.message}', wanted 40100 '${want}'`);
  else console.log(`raw ReceiveMessage lacking SUB on the group: ${st.code} ${st.message}`);
}

(async () => {
  const producer = new Producer({ ...base(ak, sk), topic });
  await producer.startup();
  const ids = new Set();
  for (let i = 0; i < N; i++) {
    const r = await producer.send({ topic, body: Buffer.from(`node-acl-${mode}-${i}`) });
    ids.add(r.messageId);
  }
  const consumer = new SimpleConsumer({ ...base(ak, sk), consumerGroup: group,
    subscriptions: new Map([[topic, '*']]), awaitDuration: 5000 });
  await consumer.startup();
  const got = new Map();
  const end = Date.now() + 60000;
  while ([...ids].some(id => !got.has(id)) && Date.now() < end) {
    let msgs = [];
    try {
      msgs = await consumer.receive(16, 30000);
    } catch (e) {
      if (!/MESSAGE_NOT_FOUND|no new message|40401/i.test(text(e))) problem(`receive: ${text(e)}`);
    }
    for (const m of msgs) {
      got.set(m.messageId, (got.get(m.messageId) || 0) + 1);
      try { await consumer.ack(m); } catch (e) { problem(`ack: ${text(e)}`); }
    }
    if (msgs.length === 0) await new Promise(r => setTimeout(r, 100));
  }
  for (const id of ids) if (got.get(id) !== 1) problem(`message ${id} received ${got.get(id) || 0} times`);
  shuttingDown++;
  await consumer.shutdown();
  await producer.shutdown();
  console.log(`${mode}: ${ids.size} messages sent, received and acknowledged once each`);
  await wrongSecret();
  await receiveRefused();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(problems.length ? 1 : 0);
})().catch((e) => { console.log(`RESULT fail ${text(e)}`); process.exit(1); });
