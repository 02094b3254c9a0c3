"""What each mqadmin 4.9.8 step of steps.tsv must print against rmqhost: the
lines Java's SubCommand classes print for a single-master cluster holding the
test's data (formats from rocketmq-tools 4.9.8; figures from the data the
steps made). Every step must also end normally (outcome "ok", no stack trace,
no "CODE:" error on stderr) unless EXPECT lists another outcome.

check(out_dir, values) -> list of failure descriptions (empty: all good).
"""
import json
import os
import re

# label -> list of (kind, pattern): "has" = substring of stdout, "re" =
# regex search in stdout (MULTILINE), "file" = (path relative to the out
# dir, substring it must contain), "not" = substring that must be absent.
# ${BROKER} / ${NS} are replaced by the run's addresses.
EXPECT = {
    "01_clusterList": [
        ("re", r"^MqaCluster\s+broker-mqa\s+0\s+\$\{BROKER\}\s+V4_9_8\s"),
    ],
    "02_updateTopic": [
        ("has", "create topic to ${BROKER} success."),
        ("has", "TopicConfig [topicName=MqaTopic, readQueueNums=4, writeQueueNums=4, perm=RW-"),
    ],
    "03_updateTopicOrder": [
        ("has", "set broker orderConf. isOrder=true, orderConf=[broker-mqa:2]"),
        ("has", "order=true]"),
    ],
    "04_updateSubGroup": [
        ("has", "create subscription group to ${BROKER} success."),
        ("has", "groupName=MqaGroup,"),
        ("has", "retryMaxTimes=3,"),
    ],
    "05_updateSubGroupB": [("has", "create subscription group to ${BROKER} success.")],
    "06_topicList": [
        ("re", r"^MqaTopic$"), ("re", r"^TBW102$"), ("re", r"^MqaCluster_REPLY_TOPIC$"),
        ("re", r"^RMQ_SYS_TRACE_TOPIC$"),
    ],
    "07_topicListCluster": [("re", r"^MqaCluster\s+MqaTopic\s")],
    "08_topicRoute": [
        ("has", '"brokerName":"broker-mqa"'), ("has", '"cluster":"MqaCluster"'),
        ("re", r'"readQueueNums":4,\s*"topicSysFlag":0,\s*"writeQueueNums":4'),
        ("has", '0:"${BROKER}"'),
    ],
    "09_topicClusterList": [("re", r"^MqaCluster$")],
    "10_updateTopicPerm": [("has", "new perm equals to the old one!")],
    "11_sendMessage": [("re", r"^broker-mqa\s+1\s+SEND_OK\s+[0-9A-F]{32,}")],
    "12_sendMessage2": [("re", r"^broker-mqa\s+1\s+SEND_OK\s+[0-9A-F]{32,}")],
    "13_sendMsgStatus": [("re", r"rt=\d+ms, SendResult=SendResult \[sendStatus=SEND_OK,"),
                         ("has", "topic=broker-mqa, brokerName=broker-mqa")],
    "14_checkMsgSendRT": [("re", r"^broker-mqa\s+\d\s+true\s+\d+"), ("re", r"^Avg RT: \d+\.\d\d")],
    "16_sendMessage3": [("re", r"^broker-mqa\s+2\s+SEND_OK\s")],
    "17_queryMsgByUniqueKey": [
        ("re", r"^Topic:\s+MqaTopic$"), ("re", r"^Tags:\s+\[TagA\]$"), ("re", r"^Keys:\s+\[MqaKey1\]$"),
        ("re", r"^Queue ID:\s+1$"), ("re", r"^Queue Offset:\s+0$"),
        ("re", r"^Store Host:\s+\$\{BROKER\}$"),
    ],
    "18_queryMsgByKey": [("re", r"^[0-9A-F]{32,}\s+1\s+0$")],
    "19_queryMsgByOffset": [("re", r"^OffsetID:\s+[0-9A-F]{32}$"), ("re", r"^Topic:\s+MqaTopic$"),
                            ("re", r"^Queue ID:\s+1$"), ("re", r"^Queue Offset:\s+0$"),
                            ("has", "KEYS=MqaKey1")],
    "20_queryMsgById": [("re", r"^OffsetID:\s+[0-9A-F]{32}$"), ("re", r"^Topic:\s+MqaTopic$"),
                        ("re", r"^Keys:\s+\[MqaKey1\]$"), ("re", r"^Queue Offset:\s+0$")],
    "21_queryMsgTraceById": [("re", r"^#Type\s+#ProducerGroup"),
                             ("re", r"^Pub\s+MqaTraceGroup\s+127\.0\.0\.1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+"
                                    r"\d+ms\s+success")],
    "22_printMsg": [("has", "MessageQueue [topic=MqaTopic, brokerName=broker-mqa, queueId=1]"),
                    ("has", "BODY: hello-mqadmin")],
    "23_printMsgByQueue": [("has", "MSGID: "), ("has", "queueId=1")],
    "24_queryCq": [("re", r"^max: \d+, min: 0$"), ("has", "ConsumeQueueData{physicOffset=")],
    "25_consumeMessage": [("has", "Consume ok"), ("has", "queueId=1, storeSize=")],
    "26_brokerStatus": [
        ("re", r"^EndTransactionQueueSize\s+: 0$"),
        ("re", r"^EndTransactionThreadPoolQueueCapacity: 100000$"),
        ("re", r"^putLatency99\s+: \d+\.\d\d$"), ("re", r"^putLatency999\s+: \d+\.\d\d$"),
        ("re", r"^putMessageFailedTimes\s+: 0$"),
        ("re", r"^putMessageDistributeTime\s+: (null|\[<=0ms\]:\d+ \[0~10ms\]:\d+ .*\[10s~\]:\d+ )$"),
        ("re", r"^putMessageTimesTotal\s+: [1-9]\d*$"), ("re", r"^brokerVersionDesc\s+: V4_9_8$"),
        ("re", r"^msgPutTotalTodayNow\s+: [1-9]\d*$"),
        ("re", r"^runtime\s+: \[ 0 days, 0 hours, \d+ minutes, \d+ seconds \]$"),
    ],
    "27_topicStatus": [("re", r"^broker-mqa\s+1\s+0\s+[1-9]\d*\s+\d{4}-")],
    "28_producerConnection": [("re", r"^0001\s+\S+@mqa-producer\s+127\.0\.0\.1:\d+\s+JAVA\s+V4_9_8$")],
    "29_producer": [("re", r"^producer group \(MqaProducerGroup\) instance : clientId=\S+@mqa-producer,"
                           r"remoteIP=/127\.0\.0\.1:\d+, language=JAVA, version=409, "
                           r"lastUpdateTimestamp=1\d{12}$")],
    "30_consumerConnection": [("re", r"^\S+@mqa-consumer\s+127\.0\.0\.1:\d+\s+JAVA\s+V4_9_8$"),
                              ("re", r"^MqaTopic\s+\*$"), ("has", "MessageModel: CLUSTERING")],
    "31_consumerProgress": [("re", r"^MqaTopic\s+broker-mqa\s+1\s+\d+\s+\d+\s+\d+\s"),
                            ("re", r"^Diff Total: \d+$")],
    "32_consumerProgressAll": [("re", r"^MqaGroup\s+1\s+V4_9_8\s+PUSH\s+CLUSTERING\s")],
    "33_consumerStatus": [("re", r"^1\s+\S+@mqa-consumer\s+V4_9_8\s"), ("has", "Rebalance OK")],
    "34_getConsumerConfig": [("re", r"^groupName\s+=  MqaGroup$"),
                             ("re", r"^retryMaxTimes\s+=  3$")],
    "35_brokerConsumeStats": [("re", r"^MqaTopic\s+MqaGroup\s+broker-mqa\s+1\s+\d+\s+\d+\s"),
                              ("re", r"^Diff Total: \d+$")],
    # real figures: the third send came after the first 10-second sampling
    "36_statsAll": [("re", r"^MqaTopic\s+MqaGroup\s+\d+\s+\d+\.\d\d\s+\d+\.\d\d\s+[1-9]\d*\s+[1-9]\d*$")],
    "37_allocateMQ": [("has", '"10.0.0.1":[{"brokerName":"broker-mqa"')],
    "38_cloneGroupOffset": [("has", "clone group offset success. srcGroup[MqaGroup], "
                                    "destGroup=[MqaCloneGroup], topic[MqaTopic]")],
    "39_resetOffsetByTime": [("has", "rollback consumer offset by specified group[MqaGroup], "
                                     "topic[MqaTopic], force[true]"),
                             ("re", r"^broker-mqa\s+1\s+\d+\s*$")],
    "40_skipAccumulatedMessage": [("re", r"^broker-mqa\s+1\s+\d+\s*$")],
    "41_updateKvConfig": [("has", "create or update kv config to namespace success.")],
    "42_deleteKvConfig": [("has", "delete kv config from namespace success.")],
    "43_updateOrderConf": [("has", "update orderConf success. topic=[MqaOrderTopic], "
                                   "orderConf=[broker-mqa:2]")],
    "44_updateOrderConfGet": [("has", "get orderConf success. topic=[MqaOrderTopic], "
                                      "orderConf=[broker-mqa:2]")],
    "45_getNamesrvConfig": [("has", "============${NS}============"),
                            ("re", r"^orderMessageEnable\s+=  false$")],
    "46_updateNamesrvConfig": [("has", "update name server config success![${NS}]")],
    "47_getBrokerConfig": [
        ("has", "============${BROKER}============"),
        ("re", r"^brokerName\s+=  broker-mqa$"), ("re", r"^brokerClusterName\s+=  MqaCluster$"),
        ("re", r"^autoCreateSubscriptionGroup\s+=  true$"), ("re", r"^flushDiskType\s+=  ASYNC_FLUSH$"),
        ("re", r"^brokerRole\s+=  ASYNC_MASTER$"), ("re", r"^listenPort\s+=  \d+$"),
        # Java's keys rmqhost has no setting of that name for, with the value
        # it behaves as (docs/compat.md GET_BROKER_CONFIG)
        ("re", r"^brokerIP2\s+=  127\.0\.0\.1$"), ("re", r"^enablePropertyFilter\s+=  true$"),
        ("re", r"^useTLS\s+=  false$"), ("re", r"^commercialEnable\s+=  false$"),
        ("re", r"^waitTimeMillsInSendQueue\s+=  9223372036854775807$"),
        ("re", r"^messageIndexEnable\s+=  true$"), ("re", r"^regionId\s+=  DefaultRegion$"),
        ("not", "secretKey"),
    ],
    "48_updateBrokerConfig": [("has", "update broker config success, ${BROKER}")],
    "48b_updateBrokerConfigStore": [("has", "update broker config success, ${BROKER}")],
    "49_getBrokerConfigAfter": [("has", "============Master: ${BROKER}============"),
                                ("re", r"^autoCreateSubscriptionGroup\s+=  false$"),
                                ("re", r"^fileReservedTime\s+=  48$")],
    "50_wipeWritePerm": [("re", r"^wipe write perm of broker\[broker-mqa\] in name server\[\$\{NS\}\] OK, \d+")],
    "51_addWritePerm": [("re", r"^add write perm of broker\[broker-mqa\] in name server\[\$\{NS\}\] OK, \d+")],
    "52_exportMetadata": [("has", "metadata.json success"),
                          ("file", ("metadata/metadata.json", '"topicName":"MqaTopic"')),
                          ("file", ("metadata/metadata.json", '"groupName":"MqaGroup"'))],
    "53_exportConfigs": [("has", "configs.json success"),
                         ("file", ("configs/configs.json", '"brokerClusterName":"MqaCluster"')),
                         ("file", ("configs/configs.json", '"masterBrokerSize":1')),
                         ("file", ("configs/configs.json", '"autoCreateSubscriptionGroup":"false"'))],
    "54_exportMetrics": [("has", "metrics.json success"),
                         ("file", ("metrics/metrics.json", '"rocketmqVersion":"V4_9_8"'))],
    "55_updateAclConfig": [("has", "create or update plain access config to ${BROKER} success.")],
    # the cluster and broker names come from the broker (were "null")
    "56_clusterAclConfigVersion": [
        ("re", r"^MqaCluster\s+broker-mqa\s+\$\{BROKER\}\s+\S+plain_acl\.yml\s+\d+\s+\d{4}-"),
        ("has", "get cluster's plain access config version success."),
    ],
    "57_updateGlobalWhiteAddr": [("has", "update global white remote addresses to ${BROKER} success.")],
    "58_deleteAclConfig": [("has", "delete plain access config account from ${BROKER} success."),
                           ("has", "account's accesskey is:mqaUser")],
    "59_cleanExpiredCQ": [("has", "success")],
    "60_deleteExpiredCommitLog": [("has", "success")],
    "61_cleanUnusedTopic": [("has", "success")],
    "62_deleteSubGroup": [("has", "delete subscription group [MqaCloneGroup] from broker [${BROKER}] "
                                  "in cluster [MqaCluster] success.")],
    "63_deleteTopic": [("has", "delete topic [MqaOrderTopic] from cluster [MqaCluster] success."),
                       ("has", "delete topic [MqaOrderTopic] from NameServer success.")],
    "64_clusterRT": [("re", r"^MqaCluster\s+broker-mqa\s+\d+\.\d\d\s+3\s+0\s*$")],
}

# steps whose outcome is not "ok": clusterRT prints every interval until the
# JVM ends, the batch stops waiting for it
OUTCOME = {"64_clusterRT": "timeout"}

# stderr a step may show: updateTopic -o asks the NameServer for the topic's
# old order conf first and prints the "not found" it gets (Java's NameServer
# answers the same)
STDERR_ALLOWED = {
    "03_updateTopicOrder": "CODE: 22  DESC: No config item, Namespace: ORDER_TOPIC_CONFIG Key: MqaOrderTopic",
}


def read_index(out):
    path = os.path.join(out, "steps.tsv")
    if not os.path.exists(path):
        return []
    return [line.rstrip("\n").split("\t") for line in open(path)]


def _sub(text, values):
    for k, v in values.items():
        text = text.replace("${%s}" % k, v)
        text = text.replace(r"\$\{%s\}" % k, re.escape(v))
    return text


def check(out, values):
    failures = []
    ran = {row[0]: row for row in read_index(out)}
    for label in sorted(EXPECT):
        if label not in ran:
            failures.append("%s: did not run" % label)
            continue
        outcome = ran[label][2]
        if outcome != OUTCOME.get(label, "ok"):
            failures.append("%s: outcome %s" % (label, outcome))
        stdout = open(os.path.join(out, label + ".out"), encoding="utf-8", errors="replace").read()
        stderr = open(os.path.join(out, label + ".err"), encoding="utf-8", errors="replace").read()
        allowed = STDERR_ALLOWED.get(label)
        if allowed and allowed in stderr:
            stderr = ""
        if re.search(r"Exception|CODE: \d+", stderr):
            first = [l for l in stderr.splitlines() if "Exception" in l or "CODE:" in l][:2]
            failures.append("%s: error on stderr: %s" % (label, " | ".join(first)))
        for kind, pat in EXPECT[label]:
            if kind == "file":
                rel, needle = pat
                path = os.path.join(out, rel)
                body = open(path).read() if os.path.exists(path) else None
                if body is None or needle not in body:
                    failures.append("%s: %s lacks %s" % (label, rel, needle))
                continue
            p = _sub(pat, values)
            ok = (p in stdout) if kind == "has" else (p not in stdout) if kind == "not" else \
                re.search(p, stdout, re.MULTILINE) is not None
            if not ok:
                failures.append("%s: expected %s %r in:\n%s" % (label, kind, p, stdout[:1500]))
    for label in ran:
        if label not in EXPECT:
            failures.append("%s: ran but has no expectation" % label)
    return failures


if __name__ == "__main__":
    import sys
    vals = dict(a.split("=", 1) for a in sys.argv[2:])
    fails = check(sys.argv[1], vals)
    for f in fails:
        print("FAIL " + f)
    sys.exit(1 if fails else 0)
