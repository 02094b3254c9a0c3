// ali-ons with accessKey/secretKey (it signs every request as ACL 1.0) against
// a daemon whose NameServer and broker are guarded by the acl plugin.
// argv: mode nameSrvPort accessKey secretKey group topic
//   route    print ROUTE ok / ROUTE_ERROR <message> for `topic`
//   consumer READY, COMMITTED q=offset,..., CLOSED (a push consumer, offsets)
//   produce  SENT <msgId> or SEND_ERROR <message>
//   consume  RECEIVED <body> (first message) then CLOSED
//   ghosts   8 clients at once, accessKey `${accessKey}${i}` (accounts that do
//            not exist), 5 route lookups each in parallel: one line
//            GHOST <i> <message> per lookup (GHOST <i> ok if admitted)
'use strict';
const { Consumer, Producer, Message } = require('ali-ons');
const MQClientAPI = require('ali-ons/lib/mq_client_api');

const [mode, nsPort, accessKey, secretKey, group, topic] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };
const common = { httpclient, logger: quiet, nameSrv: `127.0.0.1:${nsPort}`, clientIP: '127.0.0.1',
  unitName: null, namespace: '', accessKey, secretKey };

// a stuck client must never outlive the test
setTimeout(() => { console.error('ali_ons_acl: hard timeout'); process.exit(3); }, 90000).unref();

async function route() {
  const api = new MQClientAPI(Object.assign({}, common));
  await api.ready();
  try {
    await api.getTopicRouteInfoFromNameServer(topic, 3000);
    console.log('ROUTE ok');
  } catch (err) {
    console.log(`ROUTE_ERROR ${err.message}`);
  }
  await api.close();
}

async function consumer() {
  const c = new Consumer(Object.assign({ consumerGroup: group, instanceName: 'acl-consumer',
    rebalanceInterval: 1000, persistConsumerOffsetInterval: 1000 }, common));
  c.on('error', err => console.error('consumer error:', err.message));
  c.subscribe(topic, '*', async () => {});
  await c.ready();
  console.log('READY');
  let mqs = [];
  const end = Date.now() + 30000;
  while (!mqs.length && Date.now() < end) {
    mqs = [...c.processQueueTable.values()].map(p => p.messageQueue).filter(mq => mq.topic === topic);
    if (!mqs.length) await new Promise(r => setTimeout(r, 100));
  }
  for (const mq of mqs) c._offsetStore.updateOffset(mq, 40 + mq.queueId, false);
  await c.persistConsumerOffset();
  console.log('COMMITTED ' + mqs.map(mq => `${mq.queueId}=${40 + mq.queueId}`).join(','));
  await c.close();
  console.log('CLOSED');
}

async function produce() {
  const p = new Producer(Object.assign({ producerGroup: group + '-producer' }, common));
  await p.ready();
  try {
    const r = await p.send(new Message(topic, 'TagA', 'hello acl'));
    console.log(`SENT ${r.msgId}`);
  } catch (err) {
    console.log(`SEND_ERROR ${err.message}`);
  }
  await p.close();
}

async function consume() {
  const c = new Consumer(Object.assign({ consumerGroup: group, instanceName: 'acl-consume' }, common));
  const got = new Promise(resolve => c.subscribe(topic, '*', async msg => resolve(msg.body.toString())));
  await c.ready();
  console.log(`RECEIVED ${await got}`);
  await c.close();
  console.log('CLOSED');
}

// Refusals in flight together on the daemon's IO threads, each naming its
// own client's key: a remark crossing between them would show.
async function ghosts() {
  const apis = [...Array(8).keys()].map(i =>
    new MQClientAPI(Object.assign({}, common, { accessKey: `${accessKey}${i}` })));
  await Promise.all(apis.map(a => a.ready()));
  const lookups = [];
  apis.forEach((api, i) => {
    for (let k = 0; k < 5; k++) {
      lookups.push(api.getTopicRouteInfoFromNameServer(topic, 5000)
        .then(() => `GHOST ${i} ok`, err => `GHOST ${i} ${err.message}`));
    }
  });
  for (const line of await Promise.all(lookups)) console.log(line);
  await Promise.all(apis.map(a => a.close()));
}

({ route, consumer, produce, consume, ghosts })[mode]()
  .then(() => process.exit(0))
  .catch(err => { console.error('ali_ons_acl failed:', err); process.exit(2); });
