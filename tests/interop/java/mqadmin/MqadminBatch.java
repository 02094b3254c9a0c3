/*
 * MqadminBatch — runs many mqadmin (rocketmq-tools 4.9.8) subcommands in ONE
 * JVM, as `mqadmin <args>` would run each, and keeps what each printed.
 * JVM start-up dominates a single mqadmin call; here it is paid once.
 *
 * Usage: MqadminBatch STEPS_FILE OUT_DIR ROCKETMQ_HOME
 *   STEPS_FILE: one step a line, fields separated by TABs:
 *     <label> TAB <subcommand> TAB <arg> ...   run `mqadmin <subcommand> <arg>...`
 *     @capture TAB VAR TAB REGEX                VAR := group 1 of REGEX in the
 *                                               previous step's stdout
 *     @sleep TAB MILLIS                         wait
 *     @timeout TAB MILLIS                       the next step's time limit (a
 *                                               periodic command never ends)
 *     @producer TAB GROUP TAB NAMESRV           start a producer (producer tables)
 *     @consumer TAB GROUP TAB TOPIC TAB NAMESRV start a push consumer (online group)
 *     @tracedsend TAB VAR TAB GROUP TAB TOPIC TAB NAMESRV
 *                                               start a producer with message
 *                                               trace on, send one message, VAR :=
 *                                               its msgId; the producer stays up
 *                                               so its trace is surely sent (see
 *                                               tracedSend)
 *   ${VAR} in a field is replaced by a captured or -D-given (-Dmqa.VAR=...) value.
 *   ROCKETMQ_HOME holds conf/tools.yml (the ACL credentials mqadmin signs with)
 *   and conf/logback_tools.xml.
 * Writes OUT_DIR/<label>.out / .err (stdout / stderr of the step) and
 * OUT_DIR/steps.tsv: label, subcommand, outcome (ok | exit N | timeout |
 * threw X), milliseconds.
 * System.exit from a subcommand (mqadmin's argument errors) ends that step,
 * not the JVM: it needs -Djava.security.manager=allow on Java 17+.
 */

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.Permission;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class MqadminBatch {
    private static final long STEP_TIMEOUT_MS = 90_000;

    /** System.exit inside a step: thrown instead of exiting. */
    static final class ExitTrap extends SecurityException {
        final int status;

        ExitTrap(int status) {
            super("System.exit(" + status + ")");
            this.status = status;
        }
    }

    @SuppressWarnings("removal")
    static final class NoExit extends SecurityManager {
        @Override
        public void checkExit(int status) {
            throw new ExitTrap(status);
        }

        @Override
        public void checkPermission(Permission perm) {
        }

        @Override
        public void checkPermission(Permission perm, Object context) {
        }
    }

    private final Map<String, String> vars = new HashMap<>();
    private final List<AutoCloseable> clients = new ArrayList<>();
    private Object rpcHook;

    private String expand(String s) {
        Matcher m = Pattern.compile("\\$\\{([A-Za-z0-9_]+)\\}").matcher(s);
        StringBuffer sb = new StringBuffer();
        while (m.find()) {
            String v = vars.get(m.group(1));
            if (v == null) {
                v = System.getProperty("mqa." + m.group(1));
            }
            if (v == null) {
                throw new IllegalArgumentException("no value for ${" + m.group(1) + "}");
            }
            m.appendReplacement(sb, Matcher.quoteReplacement(v));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    private static final class Outcome {
        String text = "ok";
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: MqadminBatch STEPS_FILE OUT_DIR ROCKETMQ_HOME");
            System.exit(2);
        }
        // before any RocketMQ class reads it
        System.setProperty("rocketmq.home.dir", args[2]);
        new MqadminBatch().run(Paths.get(args[0]), Paths.get(args[1]), args[2]);
        // client threads of the subcommands are not all daemons
        Runtime.getRuntime().halt(0);
    }

    @SuppressWarnings("removal")
    private void run(Path steps, Path out, String home) throws Exception {
        Files.createDirectories(out);
        rpcHook = org.apache.rocketmq.acl.common.AclUtils.getAclRPCHook(home + "/conf/tools.yml");
        StringBuilder index = new StringBuilder();
        String lastStdout = "";
        long nextTimeout = STEP_TIMEOUT_MS;
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        System.setSecurityManager(new NoExit());
        try {
            for (String line : Files.readAllLines(steps, StandardCharsets.UTF_8)) {
                if (line.isEmpty() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                switch (f[0]) {
                    case "@capture": {
                        Matcher m = Pattern.compile(f[2]).matcher(lastStdout);
                        if (m.find()) {
                            vars.put(f[1], m.group(1));
                            realOut.println("captured " + f[1] + "=" + m.group(1));
                        } else {
                            realOut.println("capture " + f[1] + ": no match of " + f[2]);
                            vars.put(f[1], "NOT-CAPTURED");
                        }
                        continue;
                    }
                    case "@sleep":
                        Thread.sleep(Long.parseLong(f[1]));
                        continue;
                    case "@timeout":
                        nextTimeout = Long.parseLong(f[1]);
                        continue;
                    case "@producer":
                        startProducer(expand(f[1]), expand(f[2]));
                        continue;
                    case "@consumer":
                        startConsumer(expand(f[1]), expand(f[2]), expand(f[3]));
                        continue;
                    case "@tracedsend":
                        vars.put(f[1], tracedSend(expand(f[2]), expand(f[3]), expand(f[4])));
                        realOut.println("captured " + f[1] + "=" + vars.get(f[1]));
                        continue;
                    default:
                        break;
                }
                String label = f[0];
                String[] sub = new String[f.length - 1];
                for (int i = 1; i < f.length; i++) {
                    sub[i - 1] = expand(f[i]);
                }
                ByteArrayOutputStream so = new ByteArrayOutputStream();
                ByteArrayOutputStream se = new ByteArrayOutputStream();
                Outcome oc = new Outcome();
                long t0 = System.nanoTime();
                // mqadmin keeps one instance per subcommand in a static list
                // (SendMessageCommand keeps its producer): each step gets new ones
                resetSubCommands();
                Thread t = new Thread(() -> {
                    try {
                        org.apache.rocketmq.tools.command.MQAdminStartup.main0(sub, null);
                    } catch (ExitTrap e) {
                        oc.text = "exit " + e.status;
                    } catch (Throwable e) {
                        oc.text = "threw " + e;
                        e.printStackTrace();
                    }
                }, "step-" + label);
                t.setDaemon(true);
                System.setOut(new PrintStream(so, true, "UTF-8"));
                System.setErr(new PrintStream(se, true, "UTF-8"));
                try {
                    t.start();
                    t.join(nextTimeout);
                    if (t.isAlive()) {
                        oc.text = "timeout";
                    }
                } finally {
                    System.out.flush();
                    System.err.flush();
                    System.setOut(realOut);
                    System.setErr(realErr);
                }
                nextTimeout = STEP_TIMEOUT_MS;
                long ms = (System.nanoTime() - t0) / 1_000_000;
                lastStdout = so.toString("UTF-8");
                Files.write(out.resolve(label + ".out"), so.toByteArray());
                Files.write(out.resolve(label + ".err"), se.toByteArray());
                index.append(label).append('\t').append(sub[0]).append('\t').append(oc.text)
                    .append('\t').append(ms).append('\n');
                realOut.printf("%-28s %-24s %-10s %6d ms%n", label, sub[0], oc.text, ms);
            }
        } finally {
            System.setSecurityManager(null);
            for (AutoCloseable c : clients) {
                try {
                    c.close();
                } catch (Exception e) {
                    realErr.println("closing a client: " + e);
                }
            }
            Files.write(out.resolve("steps.tsv"), index.toString().getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void resetSubCommands() throws Exception {
        java.lang.reflect.Field f = org.apache.rocketmq.tools.command.MQAdminStartup.class
            .getDeclaredField("subCommandList");
        f.setAccessible(true);
        ((List<?>) f.get(null)).clear();
    }

    private void startProducer(String group, String namesrv) throws Exception {
        org.apache.rocketmq.client.producer.DefaultMQProducer p =
            new org.apache.rocketmq.client.producer.DefaultMQProducer(group,
                (org.apache.rocketmq.remoting.RPCHook) rpcHook);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("mqa-producer");
        p.start();
        clients.add(p::shutdown);
        System.out.println("producer " + group + " started");
    }

    /*
     * `mqadmin sendMessage -m true` shuts its producer down right after the
     * send; the 4.9.8 trace dispatcher's shutdown waits only until the trace
     * is handed to its executor, not until the asynchronous trace send is
     * done, so on a loaded machine the trace record is sometimes never sent
     * (the same with a Java broker). A producer that stays up until the end
     * of the run sends its trace for sure, so queryMsgTraceById has one to find.
     */
    private String tracedSend(String group, String topic, String namesrv) throws Exception {
        org.apache.rocketmq.client.producer.DefaultMQProducer p =
            new org.apache.rocketmq.client.producer.DefaultMQProducer(group,
                (org.apache.rocketmq.remoting.RPCHook) rpcHook, true, null);
        p.setNamesrvAddr(namesrv);
        p.setInstanceName("mqa-traced-producer");
        p.start();
        clients.add(p::shutdown);
        org.apache.rocketmq.common.message.Message m = new org.apache.rocketmq.common.message.Message(
            topic, "TagT", "MqaTraceKey", "traced".getBytes(StandardCharsets.UTF_8));
        return p.send(m).getMsgId();
    }

    private void startConsumer(String group, String topic, String namesrv) throws Exception {
        org.apache.rocketmq.client.consumer.DefaultMQPushConsumer c =
            new org.apache.rocketmq.client.consumer.DefaultMQPushConsumer(group,
                (org.apache.rocketmq.remoting.RPCHook) rpcHook,
                new org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely());
        c.setNamesrvAddr(namesrv);
        c.setInstanceName("mqa-consumer");
        c.subscribe(topic, "*");
        c.registerMessageListener(
            (org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently) (msgs, ctx) ->
                org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        c.start();
        clients.add(c::shutdown);
        System.out.println("consumer " + group + " started on " + topic);
    }
}
