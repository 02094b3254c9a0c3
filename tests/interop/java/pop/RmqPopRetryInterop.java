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

import org.apache.rocketmq.client.consumer.PopResult;
import org.apache.rocketmq.client.consumer.PopStatus;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageConst;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.header.ExtraInfoUtil;

// The POP and ACK requests, body(), one() and the run: PopInteropClient.java.
public class RmqPopRetryInterop {
  static PopResult pop(PopInteropClient c, long invisibleMs) throws Exception {
    return c.pop(-1, 32, invisibleMs, false);
  }

  // As DefaultMQPushConsumerImpl.ackAsync: the topic the POP_CK names.
  static void ack(PopInteropClient c, MessageExt m) throws Exception {
    String ck = m.getProperty(MessageConst.PROPERTY_POP_CK);
    String[] info = ExtraInfoUtil.split(ck);
    c.ack(ExtraInfoUtil.getRealTopic(info, c.topic, c.group), ExtraInfoUtil.getQueueId(info),
        ExtraInfoUtil.getQueueOffset(info), ck);
  }

  static String body(MessageExt m) {
    return PopInteropClient.body(m);
  }

  static MessageExt one(PopResult r) {
    return PopInteropClient.one(r);
  }

  static String retryFlag(MessageExt m) {
    return ExtraInfoUtil.split(m.getProperty(MessageConst.PROPERTY_POP_CK))[4];
  }

  static String run(PopInteropClient c) throws Exception {
    long deadline = System.currentTimeMillis() + 90000;
    Message msg = new Message(c.topic, "T", "r-key", "r-0".getBytes(StandardCharsets.UTF_8));
    SendResult sr = c.sendUntil(msg, new MessageQueue(c.topic, c.brokerName, 0), deadline);
    if (sr.getSendStatus() != SendStatus.SEND_OK) return "send " + sr;
    MessageExt m = one(pop(c, 1000));
    if (!body(m).equals("r-0") || m.getReconsumeTimes() != 0 || !retryFlag(m).equals("0"))
      return "first POP gave " + body(m) + "/" + m.getReconsumeTimes() + " flag " + retryFlag(m);
    // not acknowledged: it comes back from the retry topic
    PopResult r;
    while ((r = pop(c, 3000)).getPopStatus() != PopStatus.FOUND) {
      if (System.currentTimeMillis() > deadline) return "r-0 never came back";
      Thread.sleep(200);
    }
    m = one(r);
    if (!body(m).equals("r-0") || m.getReconsumeTimes() != 1)
      return "came back as " + body(m) + "/" + m.getReconsumeTimes() + ", want r-0/1";
    if (!retryFlag(m).equals("1"))
      return "POP_CK of the redelivery " + m.getProperty(MessageConst.PROPERTY_POP_CK)
          + ": retry flag want 1";
    if (!m.getTopic().equals(c.topic)) return "redelivery shown under " + m.getTopic();
    // as Java 5.3.3's revive writes the copy: 1ST_POP_TIME, no RETRY_TOPIC
    if (m.getProperty(MessageConst.PROPERTY_RETRY_TOPIC) != null
        || m.getProperty(MessageConst.PROPERTY_FIRST_POP_TIME) == null)
      return "redelivery properties " + m.getProperties();
    if (!sr.getMsgId().equals(m.getMsgId()))
      return "msgId " + m.getMsgId() + ", sent " + sr.getMsgId();
    ack(c, m);
    // acknowledged in the retry topic: not back after its invisible time
    Thread.sleep(5000);
    r = pop(c, 3000);
    if (r.getPopStatus() == PopStatus.FOUND)
      return "acknowledged r-0 came back: " + r.getMsgFoundList();
    String retryTopic = "%RETRY%" + c.group + "_" + c.topic;
    String why = "retry topic " + retryTopic + " not in the NameServer's topic list";
    while (System.currentTimeMillis() < deadline + 60000) {
      if (c.api.getTopicListFromNameServer(5000).getTopicList().contains(retryTopic)) {
        why = null;
        break;
      }
      Thread.sleep(1000);
    }
    if (why != null) return why;
    if (c.api.getTopicRouteInfoFromNameServer(retryTopic, 5000).getQueueDatas().isEmpty())
      return "no queue in the route of " + retryTopic;
    return null;
  }

  public static void main(String[] args) {
    String namesrv = args[0], run = args[3];
    PopInteropClient.runAndExit("pop-retry", namesrv, "pop_retry_pg_" + run, args[1], args[2],
        "PopRetryTopic_" + run, "pop_retry_cg_" + run, RmqPopRetryInterop::run);
  }
}
