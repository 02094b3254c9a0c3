// proxy_produce_consume.js — a RocketMQ 5.x client (rocketmq-client-nodejs,
// gRPC) produces through rmqhost's proxy plugin and a 4.x client (ali-ons,
// remoting) consumes what it produced from the same daemon: every message
// must arrive once with its body, tag, keys and user properties; the send
// receipts must carry the message ids the 5.x client made. Also checks the
// proxy's answer for a topic that does not exist.
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
const sent = new Map(); // idx -> messageId
const got = new Map(); // idx -> count

function check(msg) {
  const i = Number(msg.properties.idx);
  if (msg.body.toString() !== `grpc-body-${i}`) problems.push(`idx ${i} body ${msg.body}`);
  if (msg.tags !== (i % 2 === 0 ? 'TagA' : 'TagB')) problems.push(`idx ${i} tags ${msg.tags}`);
  if (msg.keys !== `K${i} order-${i}`) problems.push(`idx ${i} keys ${msg.keys}`);
  if (msg.properties.color !== 'green') problems.push(`idx ${i} color ${msg.properties.color}`);
  // the 5.x client's message id is the UNIQ_KEY the 4.x client reads as msgId
  if (sent.has(i) && msg.properties.UNIQ_KEY !== sent.get(i)) problems.push(`idx ${i} UNIQ_KEY ${msg.properties.UNIQ_KEY} != ${sent.get(i)}`);
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
  await lost.shutdown();

  const deadline = Date.now() + 60000;
  while (Date.now() < deadline && got.size < N) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 1000)); // a duplicate would show up meanwhile
  for (let i = 0; i < N; i++) {
    if (!got.has(i)) problems.push(`idx ${i} never consumed`);
    else if (got.get(i) !== 1) problems.push(`idx ${i} consumed ${got.get(i)} times`);
  }
  await producer.shutdown();
  await consumer.close();
  console.log(problems.length ? `RESULT fail ${problems.slice(0, 5).join('; ')}` : 'RESULT ok');
  process.exit(0);
})().catch((e) => { console.log(`RESULT fail exception ${e && e.stack}`); process.exit(1); });
