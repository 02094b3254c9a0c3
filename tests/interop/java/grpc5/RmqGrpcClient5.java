// The Java 5.x gRPC client (org.apache.rocketmq:rocketmq-client-java)
// against rmqhost's proxy server: producer (normal, FIFO with message
// groups, delay by delivery timestamp, a message type the route refuses),
// SimpleConsumer (receive, ack, changeInvisibleDuration and the message seen
// again with deliveryAttempt 2), PushConsumer with a TAG filter, and the
// offset RPCs (GetOffset, UpdateOffset, QueryOffset, PullMessage) through the
// client's own gRPC stubs, which its API does not expose. Every check is
// exactly-N with bodies, keys, tags and properties.
// Prints "PASS <case>" / "FAIL <case>: why"; exit status 0 only when all pass.
//   java RmqGrpcClient5 PROXY_ADDR RUN_ID [CASES]   (CASES: names to run, default all)
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import apache.rocketmq.v2.Code;
import apache.rocketmq.v2.GetOffsetRequest;
import apache.rocketmq.v2.GetOffsetResponse;
import apache.rocketmq.v2.MessageQueue;
import apache.rocketmq.v2.MessagingServiceGrpc;
import apache.rocketmq.v2.PullMessageRequest;
import apache.rocketmq.v2.PullMessageResponse;
import apache.rocketmq.v2.QueryOffsetPolicy;
import apache.rocketmq.v2.QueryOffsetRequest;
import apache.rocketmq.v2.Resource;
import apache.rocketmq.v2.UpdateOffsetRequest;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.consumer.ConsumeResult;
import org.apache.rocketmq.client.apis.consumer.FilterExpression;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.PushConsumer;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.Message;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.client.apis.producer.SendReceipt;
import org.apache.rocketmq.shaded.io.grpc.ManagedChannel;
import org.apache.rocketmq.shaded.io.grpc.ManagedChannelBuilder;
import org.apache.rocketmq.shaded.io.grpc.Metadata;
import org.apache.rocketmq.shaded.io.grpc.stub.MetadataUtils;

public class RmqGrpcClient5 {
  static String proxy, run;
  static ClientServiceProvider sp;
  static ClientConfiguration cfg;
  static int failures = 0;

  static void result(String name, String why) {
    System.out.println(why == null ? "PASS " + name : "FAIL " + name + ": " + why);
    if (why != null) failures++;
  }

  static String body(MessageView v) {
    byte[] b = new byte[v.getBody().remaining()];
    v.getBody().duplicate().get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  static Message msg(String topic, String tag, String key, String body, String group, Long at) {
    org.apache.rocketmq.client.apis.message.MessageBuilder b = sp.newMessageBuilder()
        .setTopic(topic).setTag(tag).setKeys(key).setBody(body.getBytes(StandardCharsets.UTF_8))
        .addProperty("run", run).addProperty("idx", body);
    if (group != null) b.setMessageGroup(group);
    if (at != null) b.setDeliveryTimestamp(at);
    return b.build();
  }

  static SimpleConsumer simple(String group, String topic, String exp) throws Exception {
    return sp.newSimpleConsumerBuilder().setClientConfiguration(cfg).setConsumerGroup(group)
        .setAwaitDuration(Duration.ofSeconds(1))
        .setSubscriptionExpressions(Collections.singletonMap(topic,
            new FilterExpression(exp, FilterExpressionType.TAG)))
        .build();
  }

  /** The message's fields as a comparable line. */
  static String describe(MessageView v) {
    return body(v) + "|tag=" + v.getTag().orElse("") + "|keys=" + v.getKeys() + "|run="
        + v.getProperties().get("run") + "|idx=" + v.getProperties().get("idx") + "|group="
        + v.getMessageGroup().orElse("");
  }

  static String expected(String body, String tag, String key, String group) {
    return body + "|tag=" + tag + "|keys=[" + key + "]|run=" + run + "|idx=" + body + "|group="
        + (group == null ? "" : group);
  }

  /** Receives until `want` messages came or 20 s passed; acks each unless told. */
  static List<MessageView> drain(SimpleConsumer c, int want, boolean ack) throws Exception {
    List<MessageView> got = new ArrayList<>();
    long until = System.currentTimeMillis() + 20000;
    while (got.size() < want && System.currentTimeMillis() < until) {
      List<MessageView> l = c.receive(16, Duration.ofSeconds(30));
      for (MessageView v : l) {
        got.add(v);
        if (ack) c.ack(v);
      }
      if (l.isEmpty()) Thread.sleep(200);
    }
    return got;
  }

  /** Nothing more within 2 s (checks exactly-N). */
  static String nothingMore(SimpleConsumer c) throws Exception {
    long until = System.currentTimeMillis() + 2000;
    while (System.currentTimeMillis() < until) {
      List<MessageView> l = c.receive(16, Duration.ofSeconds(30));
      if (!l.isEmpty()) return "an extra message: " + describe(l.get(0));
      Thread.sleep(200);
    }
    return null;
  }

  static String compare(List<String> want, List<String> got) {
    List<String> a = new ArrayList<>(want), b = new ArrayList<>(got);
    Collections.sort(a);
    Collections.sort(b);
    return a.equals(b) ? null : "expected " + a + " got " + b;
  }

  // ---- producer normal + SimpleConsumer receive/ack/changeInvisibleDuration ----
  static void normalAndSimple(Producer p, String topic) throws Exception {
    String why = null;
    SimpleConsumer c = simple("grpc5_simple_" + run, topic, "*");
    try {
      c.receive(1, Duration.ofSeconds(30)); // the group exists before anything is sent
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        String tag = i % 2 == 0 ? "tagA" : "tagB";
        SendReceipt r = p.send(msg(topic, tag, "key-n" + i, "normal-" + i, null, null));
        if (r.getMessageId() == null) why = "no message id for normal-" + i;
        want.add(expected("normal-" + i, tag, "key-n" + i, null));
      }
      List<MessageView> got = drain(c, 5, false);
      List<String> seen = new ArrayList<>();
      MessageView later = null;
      for (MessageView v : got) {
        seen.add(describe(v));
        if (v.getDeliveryAttempt() != 1) why = "first delivery attempt " + v.getDeliveryAttempt();
        if (body(v).equals("normal-3")) later = v;
        else c.ack(v);
      }
      if (why == null) why = compare(want, seen);
      if (why == null && later == null) why = "normal-3 not received";
      if (why == null) {
        // invisible for 1 s more, not acked: it comes back with attempt 2
        c.changeInvisibleDuration(later, Duration.ofSeconds(1));
        List<MessageView> again = drain(c, 1, false);
        if (again.size() != 1 || !body(again.get(0)).equals("normal-3"))
          why = "after changeInvisibleDuration: " + again.size() + " messages";
        else if (again.get(0).getDeliveryAttempt() != 2)
          why = "redelivered with attempt " + again.get(0).getDeliveryAttempt();
        else c.ack(again.get(0));
      }
      if (why == null) why = nothingMore(c);
    } finally {
      c.close();
    }
    result("simple_consumer_normal", why);
  }

  // ---- FIFO: message groups; the route refuses a NORMAL message ----
  static void fifo(Producer p, String topic, String normalTopic) throws Exception {
    String why = null;
    SimpleConsumer c = simple("grpc5_fifo_" + run, topic, "*");
    try {
      c.receive(1, Duration.ofSeconds(30));
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        String g = "g" + (i % 2);
        p.send(msg(topic, "tagF", "key-f" + i, "fifo-" + i, g, null));
        want.add(expected("fifo-" + i, "tagF", "key-f" + i, g));
      }
      List<MessageView> got = drain(c, 6, true);
      List<String> seen = new ArrayList<>();
      for (MessageView v : got) seen.add(describe(v));
      why = compare(want, seen);
      if (why == null) why = nothingMore(c);
      if (why == null) {
        try {
          p.send(msg(topic, "tagF", "k", "normal-on-fifo", null, null));
          why = "a NORMAL message was accepted on a FIFO topic";
        } catch (Exception e) {
          if (!String.valueOf(e.getMessage()).toLowerCase().contains("type"))
            why = "NORMAL on FIFO refused for another reason: " + e;
        }
      }
      if (why == null) {
        try {
          p.send(msg(normalTopic, "tagF", "k", "fifo-on-normal", "g0", null));
          why = "a FIFO message was accepted on a NORMAL topic";
        } catch (Exception e) {
          if (!String.valueOf(e.getMessage()).toLowerCase().contains("type"))
            why = "FIFO on NORMAL refused for another reason: " + e;
        }
      }
    } finally {
      c.close();
    }
    result("producer_fifo", why);
  }

  // ---- delay: delivery timestamp ----
  static void delay(Producer p, String topic) throws Exception {
    String why = null;
    SimpleConsumer c = simple("grpc5_delay_" + run, topic, "*");
    try {
      c.receive(1, Duration.ofSeconds(30));
      long at = System.currentTimeMillis() + 3000;
      p.send(msg(topic, "tagD", "key-d0", "delay-0", null, at));
      List<MessageView> got = drain(c, 1, true);
      long now = System.currentTimeMillis();
      if (got.size() != 1) why = "received " + got.size() + " delay messages";
      else if (!describe(got.get(0)).equals(expected("delay-0", "tagD", "key-d0", null)))
        why = "got " + describe(got.get(0));
      // the timer's precision is 1 s (rounded down): never earlier than that
      else if (now < at - 1000) why = "delivered " + (at - now) + " ms before its time";
      if (why == null) why = nothingMore(c);
    } finally {
      c.close();
    }
    result("producer_delay", why);
  }

  // ---- recall: a timer message cancelled by its recall handle ----
  static void recall(Producer p, String topic, String normalTopic) throws Exception {
    String why = null;
    SimpleConsumer c = simple("grpc5_recall_" + run, topic, "*");
    try {
      c.receive(1, Duration.ofSeconds(30));
      long at = System.currentTimeMillis() + 4000;
      SendReceipt gone = p.send(msg(topic, "tagR", "key-r0", "recall-0", null, at));
      p.send(msg(topic, "tagR", "key-r1", "recall-1", null, at));
      String handle = gone.getRecallHandle();
      if (handle == null || handle.isEmpty()) why = "no recall handle for a timer message";
      if (why == null) {
        String id = String.valueOf(p.recallMessage(topic, handle).getMessageId());
        if (!gone.getMessageId().toString().equals(id))
          why = "recalled " + id + ", expected " + gone.getMessageId();
      }
      if (why == null) {
        try {
          p.recallMessage(normalTopic, handle);
          why = "a recall on a NORMAL topic was accepted";
        } catch (Exception e) {
          if (!String.valueOf(e.getMessage()).contains("TopicMessageType validate failed"))
            why = "recall on NORMAL refused for another reason: " + e;
        }
      }
      if (why == null) {
        try {
          p.recallMessage(topic, "bm90IGEgaGFuZGxl");
          why = "a bogus recall handle was accepted";
        } catch (Exception e) {
          if (!String.valueOf(e.getMessage()).contains("recall handle is invalid"))
            why = "bogus handle refused for another reason: " + e;
        }
      }
      if (why == null) {
        // both were due in the same second: recall-1 only, and nothing after
        List<MessageView> got = drain(c, 1, true);
        if (got.size() != 1 || !describe(got.get(0)).equals(
            expected("recall-1", "tagR", "key-r1", null)))
          why = "received " + got.size() + (got.isEmpty() ? "" : ": " + describe(got.get(0)));
        if (why == null) why = nothingMore(c);
      }
    } finally {
      c.close();
    }
    result("producer_recall", why);
  }

  // ---- PushConsumer with a TAG filter ----
  static void push(Producer p, String topic) throws Exception {
    String why = null;
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    Map<String, String> desc = new ConcurrentHashMap<>();
    PushConsumer c = sp.newPushConsumerBuilder().setClientConfiguration(cfg)
        .setConsumerGroup("grpc5_push_" + run)
        .setSubscriptionExpressions(Collections.singletonMap(topic,
            new FilterExpression("tagA || tagC", FilterExpressionType.TAG)))
        .setMessageListener(v -> {
          seen.merge(body(v), 1, Integer::sum);
          desc.put(body(v), describe(v));
          return ConsumeResult.SUCCESS;
        }).build();
    try {
      Thread.sleep(3000); // its assignment and first receive before the sends
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 9; i++) {
        String tag = i % 3 == 0 ? "tagA" : i % 3 == 1 ? "tagB" : "tagC";
        p.send(msg(topic, tag, "key-p" + i, "push-" + i, null, null));
        if (!tag.equals("tagB")) want.add(expected("push-" + i, tag, "key-p" + i, null));
      }
      long until = System.currentTimeMillis() + 30000;
      while (seen.size() < want.size() && System.currentTimeMillis() < until) Thread.sleep(200);
      Thread.sleep(2000); // any duplicate or filtered-out message would show by now
      why = compare(want, new ArrayList<>(desc.values()));
      for (Map.Entry<String, Integer> e : seen.entrySet())
        if (why == null && e.getValue() != 1) why = e.getKey() + " consumed " + e.getValue() + " times";
    } finally {
      c.close();
    }
    result("push_consumer_tag", why);
  }

  // ---- offsets and PullMessage through the client's own stubs ----
  static void offsets(Producer p, String topic) throws Exception {
    String why = null;
    String[] hp = proxy.split(":");
    ManagedChannel ch = ManagedChannelBuilder.forAddress(hp[0], Integer.parseInt(hp[1]))
        .usePlaintext().build();
    try {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("x-mq-client-id", Metadata.ASCII_STRING_MARSHALLER), "grpc5-raw-" + run);
      MessagingServiceGrpc.MessagingServiceBlockingStub stub = MessagingServiceGrpc
          .newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
          .withDeadlineAfter(20, TimeUnit.SECONDS);
      // queue 0 of a fresh topic: 4 messages sent there by message group
      // are found by pulling every queue
      List<String> want = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        p.send(msg(topic, "tagO", "key-o" + i, "off-" + i, null, null));
        want.add("off-" + i);
      }
      Resource t = Resource.newBuilder().setName(topic).build();
      Resource g = Resource.newBuilder().setName("grpc5_pull_" + run).build();
      List<String> pulled = new ArrayList<>();
      long total = 0;
      for (int q = 0; q < 4 && why == null; q++) {
        MessageQueue mq = MessageQueue.newBuilder().setTopic(t).setId(q).build();
        long min = stub.queryOffset(QueryOffsetRequest.newBuilder().setMessageQueue(mq)
            .setQueryOffsetPolicy(QueryOffsetPolicy.BEGINNING).build()).getOffset();
        long max = stub.queryOffset(QueryOffsetRequest.newBuilder().setMessageQueue(mq)
            .setQueryOffsetPolicy(QueryOffsetPolicy.END).build()).getOffset();
        total += max - min;
        GetOffsetResponse none = stub.getOffset(GetOffsetRequest.newBuilder().setGroup(g)
            .setMessageQueue(mq).build());
        // the broker's QUERY_CONSUMER_OFFSET: no committed offset while the
        // queue's first message is still in memory reads as 0 (Java does so)
        if (none.getStatus().getCode() != Code.OK || none.getOffset() != 0)
          why = "GetOffset before any update: " + none.getStatus().getCode() + " "
              + none.getOffset();
        long next = min;
        Iterator<PullMessageResponse> it = stub.pullMessage(PullMessageRequest.newBuilder()
            .setGroup(g).setMessageQueue(mq).setOffset(min).setBatchSize(32)
            .setFilterExpression(apache.rocketmq.v2.FilterExpression.newBuilder()
                .setType(apache.rocketmq.v2.FilterType.TAG).setExpression("tagO").build())
            .build());
        Code status = null;
        while (it.hasNext()) {
          PullMessageResponse r = it.next();
          if (r.hasStatus()) status = r.getStatus().getCode();
          else if (r.hasMessage()) pulled.add(r.getMessage().getBody().toStringUtf8());
          else next = r.getNextOffset();
        }
        Code wantStatus = max > min ? Code.OK : Code.MESSAGE_NOT_FOUND;
        if (why == null && status != wantStatus)
          why = "PullMessage queue " + q + ": " + status + ", expected " + wantStatus;
        if (why == null && next != max) why = "next_offset " + next + ", expected " + max;
        if (why == null) {
          Code u = stub.updateOffset(UpdateOffsetRequest.newBuilder().setGroup(g)
              .setMessageQueue(mq).setOffset(next).build()).getStatus().getCode();
          GetOffsetResponse back = stub.getOffset(GetOffsetRequest.newBuilder().setGroup(g)
              .setMessageQueue(mq).build());
          if (u != Code.OK || back.getStatus().getCode() != Code.OK || back.getOffset() != next)
            why = "UpdateOffset " + u + " then GetOffset " + back.getStatus().getCode() + " "
                + back.getOffset() + ", expected " + next;
        }
      }
      if (why == null && total != 4) why = "queues hold " + total + " messages, expected 4";
      if (why == null) why = compare(want, pulled);
      // long polling: a pull at the end of each queue with long_polling_timeout
      // is held until a message comes (sent 2 s after the pulls), not
      // answered MESSAGE_NOT_FOUND at once
      if (why == null) {
        List<String> held = Collections.synchronizedList(new ArrayList<>());
        List<Code> heldStatus = Collections.synchronizedList(new ArrayList<>());
        List<Thread> ts = new ArrayList<>();
        for (int q = 0; q < 4; q++) {
          MessageQueue mq = MessageQueue.newBuilder().setTopic(t).setId(q).build();
          long end = stub.queryOffset(QueryOffsetRequest.newBuilder().setMessageQueue(mq)
              .setQueryOffsetPolicy(QueryOffsetPolicy.END).build()).getOffset();
          Thread th = new Thread(() -> {
            Iterator<PullMessageResponse> it2 = stub.withDeadlineAfter(25, TimeUnit.SECONDS)
                .pullMessage(PullMessageRequest.newBuilder().setGroup(g).setMessageQueue(mq)
                    .setOffset(end).setBatchSize(32)
                    .setLongPollingTimeout(org.apache.rocketmq.shaded.com.google.protobuf.Duration.newBuilder().setSeconds(15))
                    .build());
            while (it2.hasNext()) {
              PullMessageResponse r = it2.next();
              if (r.hasStatus()) heldStatus.add(r.getStatus().getCode());
              else if (r.hasMessage()) held.add(r.getMessage().getBody().toStringUtf8());
            }
          });
          th.start();
          ts.add(th);
        }
        Thread.sleep(2000);
        List<String> late = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          p.send(msg(topic, "tagL", "key-l" + i, "late-" + i, null, null));
          late.add("late-" + i);
        }
        for (Thread th : ts) th.join(30000);
        why = compare(late, new ArrayList<>(held));
        if (why != null) why = "long-polling pulls: " + why + " (statuses " + heldStatus + ")";
      }
      if (why == null) {
        Code neg = stub.updateOffset(UpdateOffsetRequest.newBuilder().setGroup(g)
            .setMessageQueue(MessageQueue.newBuilder().setTopic(t).setId(0).build())
            .setOffset(-1).build()).getStatus().getCode();
        if (neg != Code.ILLEGAL_OFFSET) why = "UpdateOffset -1: " + neg;
      }
    } finally {
      ch.shutdownNow();
    }
    result("offsets_and_pull", why);
  }

  // ---- the clients in the broker's client housekeeping (mqadmin) ----
  // The suite script runs mqadmin consumerConnection / producerConnection
  // while this waits: files in GRPC5_SYNC_DIR say when ("up" → "checked-up",
  // "down" → "checked-down"); the script prints its verdicts itself.
  static void await(java.nio.file.Path dir, String name) throws Exception {
    // mqadmin JVMs on a loaded machine: the script's checks may take minutes
    long until = System.currentTimeMillis() + 300000;
    while (!java.nio.file.Files.exists(dir.resolve(name))) {
      if (System.currentTimeMillis() > until) throw new IllegalStateException("no " + name);
      Thread.sleep(100);
    }
  }

  // Besides: a PushConsumer (group grpc5_cpush_RUN, tag "direct") that
  // mqadmin asks for its running info (consumerStatus -s: the proxy's
  // PrintThreadStackTraceCommand) and makes consume one message directly
  // (queryMsgByUniqueKey -g -d: VerifyMessageCommand); the message's id is
  // left in the sync dir, and its listener must see it twice (its delivery,
  // then the verify).
  static void connections(String topic) throws Exception {
    java.nio.file.Path dir = java.nio.file.Paths.get(System.getenv("GRPC5_SYNC_DIR"));
    Producer p = sp.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic).build();
    SimpleConsumer c = simple("grpc5_conn_" + run, topic, "tagA || tagB");
    Map<String, Integer> seen = new ConcurrentHashMap<>();
    PushConsumer pc = sp.newPushConsumerBuilder().setClientConfiguration(cfg)
        .setConsumerGroup("grpc5_cpush_" + run)
        .setSubscriptionExpressions(Collections.singletonMap(topic,
            new FilterExpression("direct", FilterExpressionType.TAG)))
        .setMessageListener(v -> {
          seen.merge(body(v), 1, Integer::sum);
          return ConsumeResult.SUCCESS;
        }).build();
    String why = null;
    try {
      Thread.sleep(3000); // the push consumer's assignment before the send
      SendReceipt r = p.send(msg(topic, "direct", "key-direct", "direct-1", null, null));
      long until = System.currentTimeMillis() + 20000;
      while (!seen.containsKey("direct-1") && System.currentTimeMillis() < until) Thread.sleep(100);
      if (!seen.containsKey("direct-1")) why = "the push consumer never got direct-1";
      java.nio.file.Files.write(dir.resolve("msgid"),
          r.getMessageId().toString().getBytes(StandardCharsets.UTF_8));
      Thread.sleep(12000); // the clients' heartbeats (every 10 s) after their settings
      java.nio.file.Files.createFile(dir.resolve("up"));
      await(dir, "checked-up");
      Integer n = seen.get("direct-1");
      if (why == null && (n == null || n != 2))
        why = "direct-1 consumed " + n + " times, expected 2 (delivery + consume directly)";
    } finally {
      pc.close();
      c.close(); // NotifyClientTermination and the end of its Telemetry stream
      p.close();
    }
    result("consume_directly_listener", why);
    java.nio.file.Files.createFile(dir.resolve("down"));
    await(dir, "checked-down"); // the verdict is the script's mqadmin_connections
  }

  // ---- transactions: commit, rollback, and one left open for the check-back ----
  // The checker commits tx-open (asked by the proxy's
  // RecoverOrphanedTransactionCommand) and answers for the others as the
  // producer ended them;
  // the consumer must see exactly tx-commit and tx-open, once each.
  static void transactions(String topic) throws Exception {
    String why = null;
    Map<String, Integer> checked = new ConcurrentHashMap<>();
    Producer tp = sp.newProducerBuilder().setClientConfiguration(cfg).setTopics(topic)
        .setTransactionChecker(v -> {
          checked.merge(body(v), 1, Integer::sum);
          // as the producer decided (a slow machine may see a check-back
          // of tx-commit or tx-rollback before its end arrives)
          return body(v).equals("tx-rollback")
              ? org.apache.rocketmq.client.apis.producer.TransactionResolution.ROLLBACK
              : org.apache.rocketmq.client.apis.producer.TransactionResolution.COMMIT;
        }).build();
    SimpleConsumer c = simple("grpc5_tx_" + run, topic, "*");
    try {
      c.receive(1, Duration.ofSeconds(30)); // the group exists before anything is sent
      org.apache.rocketmq.client.apis.producer.Transaction t1 = tp.beginTransaction();
      tp.send(msg(topic, "tx", "key-tx-commit", "tx-commit", null, null), t1);
      t1.commit();
      org.apache.rocketmq.client.apis.producer.Transaction t2 = tp.beginTransaction();
      tp.send(msg(topic, "tx", "key-tx-rollback", "tx-rollback", null, null), t2);
      t2.rollback();
      org.apache.rocketmq.client.apis.producer.Transaction t3 = tp.beginTransaction();
      tp.send(msg(topic, "tx", "key-tx-open", "tx-open", null, null), t3); // never ended
      List<MessageView> got = drain(c, 2, true);
      List<String> seen = new ArrayList<>();
      for (MessageView v : got) seen.add(describe(v));
      why = compare(java.util.Arrays.asList(expected("tx-commit", "tx", "key-tx-commit", null),
          expected("tx-open", "tx", "key-tx-open", null)), seen);
      // the rolled-back one must not come, nor anything twice
      if (why == null) {
        long until = System.currentTimeMillis() + 4000; // a few check rounds (1 s each)
        while (why == null && System.currentTimeMillis() < until) {
          List<MessageView> l = c.receive(16, Duration.ofSeconds(30));
          if (!l.isEmpty()) why = "an extra message: " + describe(l.get(0));
          Thread.sleep(200);
        }
      }
      if (why == null && !checked.containsKey("tx-open")) why = "tx-open was never checked back";
    } finally {
      c.close();
      tp.close();
    }
    result("transactions_check_back", why);
  }

  // ---- a client's Settings across a hot reload of the proxy plugin ----
  // Through the client's own stubs (its API hides heartbeats): Settings on
  // Telemetry, Heartbeat OK; the script reloads the proxy plugin ("reload"
  // → "reloaded"), which ends the Telemetry stream; a Heartbeat without new
  // Settings must still be OK (the new generation kept them), not
  // UNRECOGNIZED_CLIENT_TYPE.
  static void settingsAcrossReload() throws Exception {
    java.nio.file.Path dir = java.nio.file.Paths.get(System.getenv("GRPC5_SYNC_DIR"));
    String why = null;
    String[] hp = proxy.split(":");
    ManagedChannel ch = ManagedChannelBuilder.forAddress(hp[0], Integer.parseInt(hp[1]))
        .usePlaintext().build();
    try {
      Metadata md = new Metadata();
      md.put(Metadata.Key.of("x-mq-client-id", Metadata.ASCII_STRING_MARSHALLER), "grpc5-reload-" + run);
      md.put(Metadata.Key.of("x-mq-language", Metadata.ASCII_STRING_MARSHALLER), "JAVA");
      Resource g = Resource.newBuilder().setName("grpc5_reload_" + run).build();
      apache.rocketmq.v2.Settings st = apache.rocketmq.v2.Settings.newBuilder()
          .setClientType(apache.rocketmq.v2.ClientType.SIMPLE_CONSUMER)
          .setRequestTimeout(org.apache.rocketmq.shaded.com.google.protobuf.Duration.newBuilder().setSeconds(4))
          .setSubscription(apache.rocketmq.v2.Subscription.newBuilder().setGroup(g)
              .addSubscriptions(apache.rocketmq.v2.SubscriptionEntry.newBuilder()
                  .setTopic(Resource.newBuilder().setName("grpc5_conn_" + run))
                  .setExpression(apache.rocketmq.v2.FilterExpression.newBuilder()
                      .setType(apache.rocketmq.v2.FilterType.TAG).setExpression("*"))))
          .build();
      java.util.concurrent.CompletableFuture<apache.rocketmq.v2.TelemetryCommand> answered =
          new java.util.concurrent.CompletableFuture<>();
      org.apache.rocketmq.shaded.io.grpc.stub.StreamObserver<apache.rocketmq.v2.TelemetryCommand> up =
          MessagingServiceGrpc.newStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
              .telemetry(new org.apache.rocketmq.shaded.io.grpc.stub.StreamObserver<apache.rocketmq.v2.TelemetryCommand>() {
                public void onNext(apache.rocketmq.v2.TelemetryCommand c) { answered.complete(c); }
                public void onError(Throwable t) { answered.complete(null); }
                public void onCompleted() {}
              });
      up.onNext(apache.rocketmq.v2.TelemetryCommand.newBuilder().setSettings(st).build());
      apache.rocketmq.v2.TelemetryCommand a = answered.get(10, TimeUnit.SECONDS);
      if (a == null || a.getStatus().getCode() != Code.OK) why = "Settings answered " + a;
      MessagingServiceGrpc.MessagingServiceBlockingStub stub = MessagingServiceGrpc
          .newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
      apache.rocketmq.v2.HeartbeatRequest hb = apache.rocketmq.v2.HeartbeatRequest.newBuilder()
          .setGroup(g).setClientType(apache.rocketmq.v2.ClientType.SIMPLE_CONSUMER).build();
      Code before = stub.withDeadlineAfter(10, TimeUnit.SECONDS).heartbeat(hb).getStatus().getCode();
      if (why == null && before != Code.OK) why = "Heartbeat before the reload: " + before;
      java.nio.file.Files.createFile(dir.resolve("reload"));
      await(dir, "reloaded");
      Code after = stub.withDeadlineAfter(10, TimeUnit.SECONDS).heartbeat(hb).getStatus().getCode();
      if (why == null && after != Code.OK)
        why = "Heartbeat right after the reload, without new Settings: " + after;
    } finally {
      ch.shutdownNow();
    }
    result("settings_across_reload", why);
  }

  public static void main(String[] args) throws Exception {
    proxy = args[0];
    run = args[1];
    sp = ClientServiceProvider.loadService();
    cfg = ClientConfiguration.newBuilder().setEndpoints(proxy).enableSsl(false)
        .setRequestTimeout(Duration.ofSeconds(10)).build();
    String normal = "grpc5_normal_" + run, fifo = "grpc5_fifo_" + run,
        delay = "grpc5_delay_" + run, recall = "grpc5_recall_" + run, push = "grpc5_push_" + run, off = "grpc5_off_" + run;
    Producer p = sp.newProducerBuilder().setClientConfiguration(cfg)
        .setTopics(normal, fifo, delay, recall, push, off).build();
    try {
      String[] names = {"simple_consumer_normal", "producer_fifo", "producer_delay", "producer_recall",
          "push_consumer_tag", "offsets_and_pull", "connections_registered", "settings_across_reload", "transactions_check_back"};
      for (String n : names) {
        if (args.length > 2 && !args[2].contains(n)) continue;
        try {
          switch (n) {
            case "simple_consumer_normal": normalAndSimple(p, normal); break;
            case "producer_fifo": fifo(p, fifo, normal); break;
            case "producer_delay": delay(p, delay); break;
            case "producer_recall": recall(p, recall, normal); break;
            case "push_consumer_tag": push(p, push); break;
            case "connections_registered": connections("grpc5_conn_" + run); break;
            case "offsets_and_pull": offsets(p, off); break;
            case "settings_across_reload": settingsAcrossReload(); break;
            case "transactions_check_back": transactions("grpc5_tx_" + run); break;
            default: throw new IllegalStateException(n);
          }
        } catch (Exception e) {
          result(n, e.toString());
        }
      }
    } finally {
      p.close();
    }
    System.out.println(failures == 0 ? "ALL PASS" : failures + " FAILED");
    System.exit(failures == 0 ? 0 : 1);
  }
}
