// Creates the topics of the 5.x gRPC client test with their message types,
// as a 5.x admin does: UPDATE_AND_CREATE_TOPIC with the `attributes` header
// field (+message.type=FIFO, ...; rocketmq-client 5.3.3's MQClientAPIImpl),
// then reads each back with GET_TOPIC_CONFIG (351) and checks the attribute.
// Also checks that an unknown attribute value is refused.
// Prints "PASS setup" or "FAIL setup: why"; exit status 0 only on PASS.
//   java GrpcTopicSetup NAMESRV BROKER_ADDR TOPIC=TYPE...
import java.util.HashMap;
import java.util.Map;

import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;

public class GrpcTopicSetup {
  public static void main(String[] args) throws Exception {
    String namesrv = args[0], broker = args[1];
    DefaultMQProducer p = new DefaultMQProducer("grpc5_setup");
    p.setNamesrvAddr(namesrv);
    p.start();
    String why = null;
    try {
      MQClientAPIImpl api = p.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
      for (int i = 2; i < args.length && why == null; i++) {
        String[] tt = args[i].split("=");
        TopicConfig tc = new TopicConfig(tt[0], 4, 4, 6);
        Map<String, String> attrs = new HashMap<>();
        if (!tt[1].equals("-")) attrs.put("+message.type", tt[1]);
        tc.setAttributes(attrs);
        api.createTopic(broker, "TBW102", tc, 5000);
        TopicConfig back = api.getTopicConfig(broker, tt[0], 5000);
        String got = back.getAttributes() == null ? null : back.getAttributes().get("message.type");
        String want = tt[1].equals("-") ? null : tt[1];
        if (want == null ? got != null : !want.equals(got))
          why = "GET_TOPIC_CONFIG " + tt[0] + " message.type=" + got + ", expected " + want;
      }
      if (why == null) {
        TopicConfig bad = new TopicConfig("grpc5_bad_type", 1, 1, 6);
        Map<String, String> attrs = new HashMap<>();
        attrs.put("+message.type", "BOGUS");
        bad.setAttributes(attrs);
        try {
          api.createTopic(broker, "TBW102", bad, 5000);
          why = "a topic with message.type=BOGUS was created";
        } catch (Exception e) {
          if (!String.valueOf(e.getMessage()).contains("value is not in set"))
            why = "BOGUS refused with an unexpected reason: " + e.getMessage();
        }
      }
    } catch (Exception e) {
      why = e.toString();
    } finally {
      p.shutdown();
    }
    System.out.println(why == null ? "PASS setup" : "FAIL setup: " + why);
    System.exit(why == null ? 0 : 1);
  }
}
