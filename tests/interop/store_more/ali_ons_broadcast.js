// BROADCASTING: two consumers of one group with isBroadcast (ali-ons keeps
// their offsets in memory, the broker keeps none) must each receive every
// message exactly once, while two CLUSTERING consumers of another group
// share the messages: each message reaches exactly one of them.
// argv: nameSrvPort topic N
// stdout: "READY", "GOT <consumer> <idx>", "RESULT ..."
'use strict';
const { Consumer, Producer, Message, options, hardTimeout, until, pause, run, exactlyOnce } =
  require('./ali_ons_common');

const [nsPort, topic, nText] = process.argv.slice(2);
const N = Number(nText);
hardTimeout(150000);
const all = Array.from({ length: N }, (_, k) => k);

run(async problems => {
  const common = options(nsPort);
  const seen = {};
  const consumers = [];
  async function start(name, group, isBroadcast) {
    seen[name] = new Map();
    const c = new Consumer({ ...common, consumerGroup: group, instanceName: name, isBroadcast });
    c.on('error', err => console.error(`consumer ${name} error:`, err.message));
    c.subscribe(topic, '*', async msg => {
      const i = Number(msg.properties.idx);
      if (msg.body.toString() !== `bc-${i}`) problems.push(`${name} idx ${i} body ${msg.body}`);
      seen[name].set(i, (seen[name].get(i) || 0) + 1);
      console.log(`GOT ${name} ${i}`);
    });
    await c.ready();
    consumers.push(c);
  }
  await start('b1', 'cg_broadcast', true);
  await start('b2', 'cg_broadcast', true);
  await start('s1', 'cg_shared', false);
  await start('s2', 'cg_shared', false);
  // both clustering members must own their queues before the sends, or one
  // of them would start its queues from their ends and miss messages
  const owned = c => [...c.processQueueTable.values()].filter(q => q.messageQueue.topic === topic).length;
  if (!(await until(() => owned(consumers[2]) + owned(consumers[3]) === 4 &&
      owned(consumers[2]) > 0 && owned(consumers[3]) > 0, 30000)))
    problems.push(`cg_shared queues not split: s1 ${owned(consumers[2])}, s2 ${owned(consumers[3])}`);
  const producer = new Producer({ ...common, producerGroup: 'pg_broadcast', instanceName: 'p' });
  await producer.ready();
  console.log('READY');
  for (const i of all) {
    const m = new Message(topic, 'B', Buffer.from(`bc-${i}`));
    m.properties.idx = String(i);
    const r = await producer.send(m);
    if (r.sendStatus !== 'SEND_OK') problems.push(`send ${i}: ${r.sendStatus}`);
  }
  const sharedGot = i => (seen.s1.get(i) || 0) + (seen.s2.get(i) || 0);
  const complete = () => all.every(i => seen.b1.has(i) && seen.b2.has(i) && sharedGot(i) > 0);
  if (!(await until(complete, 60000)))
    problems.push(`b1 ${seen.b1.size}, b2 ${seen.b2.size}, s1+s2 ${seen.s1.size + seen.s2.size} of ${N}`);
  await pause(1500); // a duplicate would come with the next pulls
  exactlyOnce(problems, 'b1', seen.b1, all);
  exactlyOnce(problems, 'b2', seen.b2, all);
  for (const i of all) if (sharedGot(i) !== 1) problems.push(`cg_shared got idx ${i} ${sharedGot(i)} times`);
  if (!seen.s1.size || !seen.s2.size) problems.push('one cg_shared member got nothing');
  for (const c of consumers) await c.close();
  await producer.close();
});
