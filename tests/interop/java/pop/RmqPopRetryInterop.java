// The POP retry topic with the 5.x remoting client (rocketmq-client 5.3.3,
// MQClientAPIImpl.popMessageAsync / ackMessageAsync as its push consumer
// calls them): a message popped and never acknowledged comes back, once its
// invisible time passed, from %RETRY%<group>_<topic> (the revive's copy):
// reconsumeTimes 1, the topic the client asked for (the client sets it),
// retry flag "1" in its POP_CK, 1ST_POP_TIME and no RETRY_TOPIC property
// (as this program saw against Java 5.3.3's broker); the ack the client
// builds from that POP_CK (ExtraInfoUtil.getRealTopic: the retry topic)
// succeeds and the message does not come back; the retry topic is in the
// NameServer's topic list and has a route.
// Prints "PASS pop-retry" or "FAIL pop-retry: why"; exit status 0 only on PASS.
//   java RmqPopRetryInterop NAMESRV BROKER_ADDR BROKER_NAME RUN_ID
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.AckCallback;
import org.apache.rocketmq.client.consumer.AckResult;
import org.apache.rocketmq.client.consumer.AckStatus;
import org.apache.rocketmq.client.consumer.PopCallback;
import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.header.AckMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;
import org.apache.rocketmq.remoting.protocol.header.PopMessageRequestHeader;

public class RmqPopRetryInterop {
  static String broker, brokerName, topic, group;
  static MQClientAPIImpl api;

  static PopResult pop(long invisibleMs) throws Exception {
    PopMessageRequestHeader h = new PopMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(topic);
    h.setQueueId(-1);
    h.setMaxMsgNums(32);
    h.setInvisibleTime(invisibleMs);
    h.setPollTime(0);
    h.setBornTime(System.currentTimeMillis());
    h.setInitMode(0);
    h.setExpType("TAG");
    h.setExp("*");
    h.setOrder(Boolean.FALSE);
    CompletableFuture<PopResult> f = new CompletableFuture<>();
    api.popMessageAsync(brokerName, broker, h, 10000, new PopCallback() {
      public void onSuccess(PopResult r) { f.complete(r); }
      public void onException(Throwable e) { f.completeExceptionally(e); }
    });
    return f.get(15, TimeUnit.SECONDS);
  }

  // As DefaultMQPushConsumerImpl.ackAsync: the topic the POP_CK names.
  static void ack(MessageExt m) throws Exception {
    String ck = m.getProperty(MessageConst.PROPERTY_POP_CK);
    String[] info = ExtraInfoUtil.split(ck);
    AckMessageRequestHeader h = new AckMessageRequestHeader();
    h.setConsumerGroup(group);
    h.setTopic(ExtraInfoUtil.getRealTopic(info, topic, group));
    h.setQueueId(ExtraInfoUtil.getQueueId(info));
    h.setExtraInfo(ck);
    h.setOffset(ExtraInfoUtil.getQueueOffset(info));
    CompletableFuture<AckResult> f = new CompletableFuture<>();
    api.ackMessageAsync(broker, 10000, new AckCallback() {
      public void onSuccess(AckResult r) { f.complete(r); }
      public void onException(Throwable e) { f.completeExceptionally(e); }
    }, h);
    AckResult r = f.get(15, TimeUnit.SECONDS);
    if (r.getStatus() != AckStatus.OK) throw new IllegalStateException("ack " + r);
  }

  static String body(MessageExt m) {
    return new String(m.getBody(), StandardCharsets.UTF_8);
  }

  static MessageExt one(PopResult r) {
    List<MessageExt> l = r.getMsgFoundList();
    if (r.getPopStatus() != PopStatus.FOUND || l == null || l.size() != 1)
      throw new IllegalStateException("want one message, got " + r);
    MessageExt m = l.get(0);
    if (m.getProperty(MessageConst.PROPERTY_POP_CK) == null)
      throw new IllegalStateException("no POP_CK on " + body(m));
    return m;
  }

  static String retryFlag(MessageExt m) {
    return ExtraInfoUtil.split(m.getProperty(MessageConst.PROPERTY_POP_CK))[4];
  }

  static String run(DefaultMQProducer p) throws Exception {
    long deadline = System.currentTimeMillis() + 90000;
    Message msg = new Message(topic, "T", "r-key", "r-0".getBytes(StandardCharsets.UTF_8));
    SendResult sr = null;
    while (sr == null) {
      try {
        sr = p.send(msg, new MessageQueue(topic, brokerName, 0));
      } catch (Exception e) { // the route of a new topic, on a loaded machine
        if (System.currentTimeMillis() > deadline) throw e;
        Thread.sleep(500);
      }
    }
    if (sr.getSendStatus() != SendStatus.SEND_OK) return "send " + sr;
    MessageExt m = one(pop(1000));
    if (!body(m).equals("r-0") || m.getReconsumeTimes() != 0 || !retryFlag(m).equals("0"))
      return "first POP gave " + body(m) + "/" + m.getReconsumeTimes() + " flag " + retryFlag(m);
    // not acknowledged: it comes back from the retry topic
    PopResult r;
    while ((r = pop(3000)).getPopStatus() != PopStatus.FOUND) {
      if (System.currentTimeMillis() > deadline) return "r-0 never came back";
      Thread.sleep(200);
    }
    m = one(r);
    if (!body(m).equals("r-0") || m.getReconsumeTimes() != 1)
      return "came back as " + body(m) + "/" + m.getReconsumeTimes() + ", want r-0/1";
    if (!retryFlag(m).equals("1"))
      return "POP_CK of the redelivery " + m.getProperty(MessageConst.PROPERTY_POP_CK)
          + ": retry flag want 1";
    if (!m.getTopic().equals(topic)) return "redelivery shown under " + m.getTopic();
    // as Java 5.3.3's revive writes the copy: 1ST_POP_TIME, no RETRY_TOPIC
    if (m.getProperty(MessageConst.PROPERTY_RETRY_TOPIC) != null
        || m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) == null)
      return "redelivery properties " + m.getProperties();
    if (!sr.getMsgId().equals(m.getMsgId()))
      return "msgId " + m.getMsgId() + ", sent " + sr.getMsgId();
    ack(m);
    // acknowledged in the retry topic: not back after its invisible time
    Thread.sleep(5000);
    r = pop(3000);
    if (r.getPopStatus() == PopStatus.FOUND)
      return "acknowledged r-0 came back: " + r.getMsgFoundList();
    String retryTopic = "%RETRY%" + group + "_" + topic;
    String why = "retry topic " + retryTopic + " not in the NameServer's topic list";
    while (System.currentTimeMillis() < deadline + 60000) {
      if (api.getTopicListFromNameServer(5000).getTopicList().contains(retryTopic)) {
        why = null;
        break;
      }
      Thread.sleep(1000);
    }
    if (why != null) return why;
    if (api.getTopicRouteInfoFromNameServer(retryTopic, 5000).getQueueDatas().isEmpty())
      return "no queue in the route of " + retryTopic;
    return null;
  }

  public static void main(String[] args) throws Exception {
    String namesrv = args[0], run = args[3];
    broker = args[1];
    brokerName = args[2];
    topic = "PopRetryTopic_" + run;
    group = "pop_retry_cg_" + run;
    DefaultMQProducer p = new DefaultMQProducer("pop_retry_pg_" + run);
    p.setNamesrvAddr(namesrv);
    p.setSendMsgTimeout(15000);
    String why;
    try {
      p.start();
      api = p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
      why = run(p);
    } catch (Exception e) {
      why = e.toString();
    } finally {
      p.shutdown();
    }
    System.out.println(why == null ? "PASS pop-retry" : "FAIL pop-retry: " + why);
    System.exit(why == null ? 0 : 1);
  }
}
