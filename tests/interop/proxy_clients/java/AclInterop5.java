// AclInterop5 — RocketMQ 5.x's Java client (org.apache.rocketmq:
// rocketmq-client-java, set grpc-client-java-5) with credentials against
// rmqhost's proxy plugin while the acl plugin guards the broker
// (run_acl_java.sh writes the plain_acl.yml); the proxy asks the acl plugin
// (service "acl.check") about every gRPC call.
//   - the right AccessKey/SecretKey: a producer sends N messages to a topic
//     the account may PUB|SUB, a SimpleConsumer of a group it may SUB
//     receives and acknowledges each exactly once;
//   - a wrong secret: no message gets through; the proxy answers
//     UNAUTHORIZED (40100) "Check signature failed for accessKey=<AK>" (in
//     the client's error, or — when the client only says it has no route —
//     in a raw QueryRoute through the client's own stubs, signed as it signs);
//   - an account whose groups lack SUB: its SimpleConsumer gets no message
//     (the client cannot start: its Telemetry Settings name the group, see
//     receiveRefused) and a ReceiveMessage made raw with that account is
//     refused UNAUTHORIZED (40100) "No default permission for group:<G>".
// Over plaintext or TLS (the client's enableSsl; it trusts any certificate).
//   java AclInterop5 ENDPOINT plain|tls AK SK TOPIC GROUP NOSUB_AK NOSUB_SK N
// Prints "RESULT ok" or "RESULT fail <why>"; exit status 0 only for ok.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import apache.rocketmq.v2.Address;
import apache.rocketmq.v2.AddressScheme;
import apache.rocketmq.v2.Endpoints;
import apache.rocketmq.v2.FilterExpression;
import apache.rocketmq.v2.FilterType;
import apache.rocketmq.v2.MessageQueue;
import apache.rocketmq.v2.MessagingServiceGrpc;
import apache.rocketmq.v2.QueryRouteRequest;
import apache.rocketmq.v2.ReceiveMessageRequest;
import apache.rocketmq.v2.ReceiveMessageResponse;
import apache.rocketmq.v2.Resource;
import apache.rocketmq.v2.Status;
import org.apache.rocketmq.client.apis.ClientConfiguration;
import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.apis.StaticSessionCredentialsProvider;
import org.apache.rocketmq.client.apis.consumer.FilterExpressionType;
import org.apache.rocketmq.client.apis.consumer.SimpleConsumer;
import org.apache.rocketmq.client.apis.message.MessageView;
import org.apache.rocketmq.client.apis.producer.Producer;
import org.apache.rocketmq.shaded.com.google.protobuf.util.Durations;
import org.apache.rocketmq.shaded.grpc.netty.GrpcSslContexts;
import org.apache.rocketmq.shaded.grpc.netty.NettyChannelBuilder;
import org.apache.rocketmq.shaded.io.grpc.ManagedChannel;
import org.apache.rocketmq.shaded.io.grpc.Metadata;
import org.apache.rocketmq.shaded.io.grpc.netty.shaded.io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import org.apache.rocketmq.shaded.io.grpc.stub.MetadataUtils;

public class AclInterop5 {
  static String endpoint, mode;
  static boolean tls;
  static final List<String> problems = new ArrayList<>();
  static final ClientServiceProvider sp = ClientServiceProvider.loadService();

  static void problem(String p) {
    System.out.println("problem: " + p);
    problems.add(p);
  }

  static void finish() {
    System.out.println(problems.isEmpty() ? "RESULT ok"
        : "RESULT fail " + String.join("; ", problems.subList(0, Math.min(5, problems.size()))));
    System.out.flush();
    Runtime.getRuntime().halt(problems.isEmpty() ? 0 : 1);
  }

  static ClientConfiguration cfg(String ak, String sk) {
    return ClientConfiguration.newBuilder().setEndpoints(endpoint).enableSsl(tls)
        .setRequestTimeout(Duration.ofSeconds(5))
        .setCredentialProvider(new StaticSessionCredentialsProvider(ak, sk)).build();
  }

  /** Every message of an exception and its causes. */
  static String chain(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (; t != null; t = t.getCause()) b.append(t).append(" | ");
    return b.toString();
  }

  static boolean refusedAs(String what, Throwable t, String want) {
    String s = chain(t);
    if (!s.contains("40100") && !s.contains("UNAUTHORIZED")) return false;
    if (!s.contains(want)) return false;
    System.out.println(what + ": refused as expected (" + s + ")");
    return true;
  }

  /** A blocking stub of the client's own generated code, signed as the client signs. */
  static MessagingServiceGrpc.MessagingServiceBlockingStub raw(ManagedChannel ch, String ak, String sk)
      throws Exception {
    String now = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
    Mac mac = Mac.getInstance("HmacSHA1");
    mac.init(new SecretKeySpec(sk.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
    StringBuilder sig = new StringBuilder();
    for (byte x : mac.doFinal(now.getBytes(StandardCharsets.UTF_8))) sig.append(String.format("%02X", x));
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("x-mq-client-id", Metadata.ASCII_STRING_MARSHALLER), "java-acl-raw");
    md.put(Metadata.Key.of("x-mq-date-time", Metadata.ASCII_STRING_MARSHALLER), now);
    md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
        "MQv2-HMAC-SHA1 Credential=" + ak + ", SignedHeaders=x-mq-date-time, Signature=" + sig);
    return MessagingServiceGrpc.newBlockingStub(ch).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
        .withDeadlineAfter(20, TimeUnit.SECONDS);
  }

  static ManagedChannel channel() throws Exception {
    String[] hp = endpoint.split(":");
    NettyChannelBuilder b = NettyChannelBuilder.forAddress(hp[0], Integer.parseInt(hp[1]));
    if (tls) b.sslContext(GrpcSslContexts.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE).build());
    else b.usePlaintext();
    return b.build();
  }

  static void checkStatus(String what, Status st, String want) {
    if (st == null || st.getCodeValue() != 40100 || !st.getMessage().contains(want)) {
      problem(what + ": " + (st == null ? "no status" : st.getCodeValue() + " '" + st.getMessage() + "'")
          + ", wanted 40100 '" + want + "'");
    } else {
      System.out.println(what + ": " + st.getCodeValue() + " " + st.getMessage());
    }
  }

  static void wrongSecret(String ak, String sk, String topic) throws Exception {
    String what = "wrong secret key", want = "Check signature failed for accessKey=" + ak;
    Throwable err = null;
    Producer p = null;
    try {
      p = sp.newProducerBuilder().setClientConfiguration(cfg(ak, sk + "-wrong")).setTopics(topic).build();
      p.send(sp.newMessageBuilder().setTopic(topic).setBody("must-not-pass".getBytes(StandardCharsets.UTF_8)).build());
      problem(what + ": the send succeeded");
    } catch (Throwable t) {
      err = t;
    } finally {
      if (p != null) p.close();
    }
    if (err == null || refusedAs(what, err, want)) return;
    System.out.println(what + ": the client says " + chain(err) + "; a raw QueryRoute shows the answer");
    ManagedChannel ch = channel();
    try {
      String[] hp = endpoint.split(":");
      QueryRouteRequest req = QueryRouteRequest.newBuilder().setTopic(Resource.newBuilder().setName(topic))
          .setEndpoints(Endpoints.newBuilder().setScheme(AddressScheme.IPv4)
              .addAddresses(Address.newBuilder().setHost(hp[0]).setPort(Integer.parseInt(hp[1]))))
          .build();
      checkStatus(what + " (raw QueryRoute)", raw(ch, ak, sk + "-wrong").queryRoute(req).getStatus(), want);
    } finally {
      ch.shutdownNow();
    }
  }

  static void receiveRefused(String ak, String sk, String topic, String group) throws Exception {
    String what = "receive with an account lacking SUB on the group";
    String want = "No default permission for group:" + group;
    Throwable err = null;
    SimpleConsumer c = null;
    String where = "start";
    try {
      c = sp.newSimpleConsumerBuilder().setClientConfiguration(cfg(ak, sk)).setConsumerGroup(group)
          .setAwaitDuration(Duration.ofSeconds(5))
          .setSubscriptionExpressions(Collections.singletonMap(topic,
              new org.apache.rocketmq.client.apis.consumer.FilterExpression("*", FilterExpressionType.TAG)))
          .build();
      where = "receive";
      List<MessageView> got = c.receive(16, Duration.ofSeconds(30));
      problem(what + ": receive answered " + got.size() + " messages");
    } catch (Throwable t) {
      err = t;
    } finally {
      if (c != null) c.close();
    }
    // 5.2.0 cannot start such a consumer: the proxy answers its Telemetry
    // Settings (group SUB) with a status-only command and ends the stream,
    // as Java's proxy does (ResponseWriter.write); the client, waiting 3 s
    // for Settings, then writes on the stream it closed itself and says only
    // "Stream is already completed". The raw ReceiveMessage below shows the
    // proxy's answer either way.
    if (err != null && !refusedAs(what + " (at its " + where + ")", err, want)) {
      if ("start".equals(where)) {
        System.out.println(what + ": the client could not start (" + chain(err)
            + "); a raw ReceiveMessage shows the answer");
      } else {
        problem(what + ": at its receive " + chain(err) + ", wanted 40100 '" + want + "'");
      }
    }
    ManagedChannel ch = channel();
    try {
      ReceiveMessageRequest req = ReceiveMessageRequest.newBuilder().setGroup(Resource.newBuilder().setName(group))
          .setMessageQueue(MessageQueue.newBuilder().setTopic(Resource.newBuilder().setName(topic)).setId(-1))
          .setFilterExpression(FilterExpression.newBuilder().setType(FilterType.TAG).setExpression("*"))
          .setBatchSize(1).setAutoRenew(false).setInvisibleDuration(Durations.fromSeconds(30))
          .setLongPollingTimeout(Durations.fromSeconds(5)).build();
      Iterator<ReceiveMessageResponse> it = raw(ch, ak, sk).receiveMessage(req);
      Status st = null;
      while (it.hasNext()) {
        ReceiveMessageResponse r = it.next();
        if (st == null && r.hasStatus()) st = r.getStatus();
      }
      checkStatus("raw ReceiveMessage lacking SUB on the group", st, want);
    } finally {
      ch.shutdownNow();
    }
  }

  public static void main(String[] a) throws Exception {
    endpoint = a[0];
    mode = a[1];
    tls = "tls".equals(mode);
    String ak = a[2], sk = a[3], topic = a[4], group = a[5], noSubAk = a[6], noSubSk = a[7];
    int n = Integer.parseInt(a[8]);
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(200_000);
      } catch (InterruptedException e) {
        return;
      }
      System.out.println("RESULT fail hard timeout");
      Runtime.getRuntime().halt(3);
    });
    watchdog.setDaemon(true);
    watchdog.start();
    try {
      Map<String, Integer> got = new HashMap<>();
      List<String> ids = new ArrayList<>();
      try (Producer p = sp.newProducerBuilder().setClientConfiguration(cfg(ak, sk)).setTopics(topic).build()) {
        for (int i = 0; i < n; i++) {
          ids.add(p.send(sp.newMessageBuilder().setTopic(topic)
              .setBody(("java-acl-" + mode + "-" + i).getBytes(StandardCharsets.UTF_8)).build())
              .getMessageId().toString());
        }
      }
      try (SimpleConsumer c = sp.newSimpleConsumerBuilder().setClientConfiguration(cfg(ak, sk))
          .setConsumerGroup(group).setAwaitDuration(Duration.ofSeconds(5))
          .setSubscriptionExpressions(Collections.singletonMap(topic,
              new org.apache.rocketmq.client.apis.consumer.FilterExpression("*", FilterExpressionType.TAG)))
          .build()) {
        long end = System.currentTimeMillis() + 60_000;
        while (!got.keySet().containsAll(ids) && System.currentTimeMillis() < end) {
          List<MessageView> ms = Collections.emptyList();
          try {
            ms = c.receive(16, Duration.ofSeconds(30));
          } catch (Exception e) {
            if (!chain(e).contains("40401") && !chain(e).contains("MESSAGE_NOT_FOUND")) problem("receive: " + chain(e));
          }
          for (MessageView m : ms) {
            got.merge(m.getMessageId().toString(), 1, Integer::sum);
            try {
              c.ack(m);
            } catch (Exception e) {
              problem("ack: " + chain(e));
            }
          }
        }
      }
      for (String id : ids) {
        if (got.getOrDefault(id, 0) != 1) problem("message " + id + " received " + got.getOrDefault(id, 0) + " times");
      }
      // a new group's POP starts at the queue's start: the run before this
      // one (another group) left its messages there too
      System.out.println(mode + ": " + ids.size() + " messages sent, each received and acknowledged once ("
          + got.size() + " in all)");
      wrongSecret(ak, sk, topic);
      receiveRefused(noSubAk, noSubSk, topic, group);
    } catch (Throwable t) {
      problem("with the right key: " + chain(t));
    }
    finish();
  }
}
