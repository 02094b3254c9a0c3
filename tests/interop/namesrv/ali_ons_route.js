// Asks the NameServer at 127.0.0.1:PORT for topic routes with ali-ons' own
// client API (the code its Producer/Consumer use) and prints one JSON line
// per topic: {"topic","ok":true,"route":{...}} or {"topic","ok":false,
// "name","code","message"}. argv: port topic...
'use strict';
const MQClientAPI = require('ali-ons/lib/mq_client_api');

const [port, ...topics] = process.argv.slice(2);
const quiet = { info() {}, debug() {}, warn() {}, error(...a) { console.error(...a); } };
const httpclient = { request() { throw new Error('no address server: nameSrv is set'); } };

// a stuck client must never outlive the test
setTimeout(() => { console.error('ali_ons_route: hard timeout'); process.exit(3); }, 60000).unref();

(async () => {
  const api = new MQClientAPI({ httpclient, logger: quiet, nameSrv: `127.0.0.1:${port}`,
    clientIP: '127.0.0.1', unitName: null, namespace: '' });
  await api.ready();
  for (const topic of topics) {
    try {
      const route = await api.getTopicRouteInfoFromNameServer(topic, 3000);
      console.log(JSON.stringify({ topic, ok: true, route }));
    } catch (err) {
      console.log(JSON.stringify({ topic, ok: false, name: err.name, code: err.code,
        message: err.message }));
    }
  }
  await api.close();
  process.exit(0);
})().catch(err => { console.error('ali_ons_route:', err); process.exit(2); });
