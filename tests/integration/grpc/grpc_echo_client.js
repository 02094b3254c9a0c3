// grpc_echo_client.js — drives the grpc_echo example plugin with @grpc/grpc-js
// (a real gRPC implementation): unary, server-streaming, bidi-streaming, a
// status with a message, an unknown method, a deadline, invoke_local.
// Usage: node grpc_echo_client.js HOST:PORT [tls CA_FILE]
//        node grpc_echo_client.js HOST:PORT reload
//   (reload: a Chat stream is opened, "OPEN" printed, and after the line
//    "go" on stdin — the test reloads the plugin meanwhile — the stream and
//    new calls must still be answered)
// Prints "CHECK name ok|FAIL detail" per check and "RESULT ok" or
// "RESULT FAIL ...".
'use strict';
const grpc = require('@grpc/grpc-js');
const fs = require('fs');

const [target, mode, caFile] = process.argv.slice(2);
const creds = mode === 'tls'
  ? grpc.credentials.createSsl(fs.readFileSync(caFile))
  : grpc.credentials.createInsecure();
const id = (b) => b;
const def = {
  Say: { path: '/rmqhost.example.Echo/Say', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Repeat: { path: '/rmqhost.example.Echo/Repeat', requestStream: false, responseStream: true,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Chat: { path: '/rmqhost.example.Echo/Chat', requestStream: true, responseStream: true,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Fail: { path: '/rmqhost.example.Echo/Fail', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Remote: { path: '/rmqhost.example.Echo/Remote', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
  Missing: { path: '/rmqhost.example.Echo/Missing', requestStream: false, responseStream: false,
         requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
};
const Client = grpc.makeGenericClientConstructor(def, 'Echo');
const client = new Client(target, creds);
const deadline = () => Date.now() + 10000;

const failures = [];
function check(name, ok, detail) {
  console.log(`CHECK ${name} ${ok ? 'ok' : 'FAIL ' + detail}`);
  if (!ok) failures.push(`${name}: ${detail}`);
}
const unary = (m, buf, opts = {}) => new Promise((resolve) =>
  client[m](buf, new grpc.Metadata(), { deadline: deadline(), ...opts },
    (err, res) => resolve({ err, res })));

async function main() {
  // unary, with a body big enough to span several DATA frames
  const big = Buffer.alloc(200000, 7);
  big.write('hello', 0);
  let r = await unary('Say', big);
  check('unary_echo', !r.err && Buffer.compare(r.res, big) === 0,
    r.err ? r.err.message : `got ${r.res.length} bytes`);
  r = await unary('Say', Buffer.alloc(0));
  check('unary_empty', !r.err && r.res.length === 0, r.err ? r.err.message : 'non-empty');

  // server streaming: 5 copies then OK
  const got = await new Promise((resolve) => {
    const out = [];
    const s = client.Repeat(Buffer.concat([Buffer.from([5]), Buffer.from('abc')]),
      new grpc.Metadata(), { deadline: deadline() });
    s.on('data', (d) => out.push(d.toString()));
    s.on('status', (st) => resolve({ out, code: st.code }));
    s.on('error', () => {});
  });
  check('server_streaming', got.code === 0 && got.out.join(',') === 'abc,abc,abc,abc,abc',
    `code ${got.code} got ${got.out.join(',')}`);

  // bidi: three messages echoed in order, then "bye" after half-close
  const chat = await new Promise((resolve) => {
    const out = [];
    const s = client.Chat(new grpc.Metadata(), { deadline: deadline() });
    s.on('data', (d) => out.push(d.toString()));
    s.on('status', (st) => resolve({ out, code: st.code }));
    s.on('error', () => {});
    s.write(Buffer.from('one'));
    s.write(Buffer.from('two'));
    s.write(Buffer.from('three'));
    s.end();
  });
  check('bidi_streaming', chat.code === 0 && chat.out.join(',') === 'one,two,three,bye',
    `code ${chat.code} got ${chat.out.join(',')}`);

  // a status with a message that needs percent-encoding
  r = await unary('Fail', Buffer.from('bad 100% ü'));
  check('status_message', r.err && r.err.code === grpc.status.INVALID_ARGUMENT &&
    r.err.details === 'bad 100% ü', r.err ? `${r.err.code} ${r.err.details}` : 'no error');

  // a method nobody registered
  r = await unary('Missing', Buffer.from('x'));
  check('unimplemented', r.err && r.err.code === grpc.status.UNIMPLEMENTED &&
    r.err.details === 'Method not found: rmqhost.example.Echo/Missing',
    r.err ? `${r.err.code} ${r.err.details}` : 'no error');

  // invoke_local: echo.so's code 9001 on the remoting server, no socket
  r = await unary('Remote', Buffer.from('9001'));
  check('invoke_local', !r.err && r.res.toString() === '0 ',
    r.err ? r.err.message : `got '${r.res.toString()}'`);
  r = await unary('Remote', Buffer.from('4242'));
  check('invoke_local_unknown_code', !r.err &&
    r.res.toString() === '3  request type 4242 not supported',
    r.err ? r.err.message : `got '${r.res.toString()}'`);

  // many concurrent calls on one connection
  const many = await Promise.all([...Array(50).keys()].map((i) =>
    unary('Say', Buffer.from(`m${i}`)).then((x) => !x.err && x.res.toString() === `m${i}`)));
  check('concurrent_calls', many.every((x) => x), `${many.filter((x) => !x).length} failed`);

  client.close();
  console.log(failures.length ? `RESULT FAIL ${failures.join('; ')}` : 'RESULT ok');
}
// A bidi stream that lives across a hot reload of the plugin: each message
// is dispatched to the generation live when it arrives.
async function acrossReload() {
  const out = [];
  let status = null;
  const s = client.Chat(new grpc.Metadata(), { deadline: Date.now() + 60000 });
  s.on('data', (d) => out.push(d.toString()));
  s.on('status', (st) => { status = st.code; });
  s.on('error', () => {});
  s.write(Buffer.from('before'));
  while (out.length < 1 && status === null) await new Promise((r) => setTimeout(r, 20));
  console.log('OPEN');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  s.write(Buffer.from('after'));
  s.end();
  while (status === null) await new Promise((r) => setTimeout(r, 20));
  check('stream_across_reload', status === 0 && out.join(',') === 'before,after,bye',
    `code ${status} got ${out.join(',')}`);
  const r = await unary('Say', Buffer.from('fresh'));
  check('call_after_reload', !r.err && r.res.toString() === 'fresh', r.err ? r.err.message : 'bad');
  client.close();
  console.log(failures.length ? `RESULT FAIL ${failures.join('; ')}` : 'RESULT ok');
  process.exit(0);
}

(mode === 'reload' ? acrossReload() : main())
  .catch((e) => { console.log(`RESULT FAIL exception ${e.stack}`); });
