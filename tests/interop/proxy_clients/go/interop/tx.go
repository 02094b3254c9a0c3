package main

// Transactions through the Go client: a TRANSACTION topic is created on the
// broker role with a raw remoting UPDATE_AND_CREATE_TOPIC (the Go 5.x client
// has no admin API); a transactional producer commits go5-tx-commit, rolls
// back go5-tx-rollback and leaves go5-tx-open unended, which the store's
// check-back reaches through the proxy's RecoverOrphanedTransactionCommand:
// the producer's checker commits it (and would roll back anything else). A
// SimpleConsumer must see exactly go5-tx-commit and go5-tx-open, once
// each, and the checker must have been asked about go5-tx-open only.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

// createTransactionTopic: UPDATE_AND_CREATE_TOPIC (17) with the 5.x
// attribute "+message.type=TRANSACTION".
func createTransactionTopic(broker, topic string) error {
	return createTopic(broker, topic, "+message.type=TRANSACTION")
}

// createTopic: UPDATE_AND_CREATE_TOPIC (17) with 4 queues and the 5.x
// attributes attrs, a JSON-serialized remoting frame.
func createTopic(broker, topic, attrs string) error {
	conn, err := net.DialTimeout("tcp", broker, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	header, _ := json.Marshal(map[string]interface{}{
		"code": 17, "language": "GO", "version": 409, "opaque": 1, "flag": 0,
		"extFields": map[string]string{
			"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "4",
			"writeQueueNums": "4", "perm": "6", "topicFilterType": "SINGLE_TAG",
			"topicSysFlag": "0", "order": "false", "attributes": attrs,
		},
	})
	frame := make([]byte, 8+len(header))
	binary.BigEndian.PutUint32(frame, uint32(4+len(header)))
	binary.BigEndian.PutUint32(frame[4:], uint32(len(header)))
	copy(frame[8:], header)
	if _, err := conn.Write(frame); err != nil {
		return err
	}
	var lens [8]byte
	if _, err := io.ReadFull(conn, lens[:]); err != nil {
		return err
	}
	total := binary.BigEndian.Uint32(lens[:4])
	hlen := binary.BigEndian.Uint32(lens[4:]) & 0xFFFFFF
	if total < 4+hlen || total > 1<<20 {
		return fmt.Errorf("bad answer frame (%d, %d)", total, hlen)
	}
	rest := make([]byte, total-4)
	if _, err := io.ReadFull(conn, rest); err != nil {
		return err
	}
	var ans struct {
		Code   int    `json:"code"`
		Remark string `json:"remark"`
	}
	if err := json.Unmarshal(rest[:hlen], &ans); err != nil {
		return err
	}
	if ans.Code != 0 {
		return fmt.Errorf("UPDATE_AND_CREATE_TOPIC answered %d %s", ans.Code, ans.Remark)
	}
	return nil
}

func transactions(endpoint, broker, topic string, creds *credentials.SessionCredentials) {
	if err := createTransactionTopic(broker, topic); err != nil {
		problem("transactions: creating %s: %v", topic, err)
		return
	}
	var mu sync.Mutex
	checked := map[string]int{}
	producer, err := rmq.NewProducer(&rmq.Config{Endpoint: endpoint, Credentials: creds},
		rmq.WithTopics(topic),
		rmq.WithTransactionChecker(&rmq.TransactionChecker{
			Check: func(mv *rmq.MessageView) rmq.TransactionResolution {
				mu.Lock()
				checked[string(mv.GetBody())]++
				mu.Unlock()
				// as the producer decided (a slow machine may see a check-back
				// of the ended ones before their end arrives)
				if string(mv.GetBody()) == "go5-tx-rollback" {
					return rmq.ROLLBACK
				}
				return rmq.COMMIT
			}}))
	if err != nil {
		problem("transactions: NewProducer: %v", err)
		return
	}
	if err := producer.Start(); err != nil {
		problem("transactions: producer Start: %v", err)
		return
	}
	defer producer.GracefulStop()
	consumer, err := rmq.NewSimpleConsumer(&rmq.Config{Endpoint: endpoint,
		ConsumerGroup: "GoTxGroup", Credentials: creds},
		rmq.WithAwaitDuration(time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{topic: rmq.SUB_ALL}))
	if err != nil {
		problem("transactions: NewSimpleConsumer: %v", err)
		return
	}
	if err := consumer.Start(); err != nil {
		problem("transactions: consumer Start: %v", err)
		return
	}
	defer consumer.GracefulStop()
	// the group exists before anything is sent
	_, _ = consumer.Receive(context.Background(), 1, 30*time.Second)
	send := func(body string) rmq.Transaction {
		tx := producer.BeginTransaction()
		msg := &rmq.Message{Topic: topic, Body: []byte(body)}
		msg.SetTag("Tx")
		if _, err := producer.SendWithTransaction(context.Background(), msg, tx); err != nil {
			problem("transactions: send %s: %v", body, err)
		}
		return tx
	}
	_ = send("go5-tx-commit").Commit()
	_ = send("go5-tx-rollback").RollBack()
	send("go5-tx-open") // never ended: resolved by the check-back
	got := receiveUntil(consumer, 2, 30*time.Second, 40*time.Second)
	// a few more check rounds (1 s each): the rolled-back one must not come
	end := time.Now().Add(4 * time.Second)
	for time.Now().Before(end) {
		mvs, _ := consumer.Receive(context.Background(), 16, 30*time.Second)
		got = append(got, mvs...)
		if len(mvs) == 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	var bodies []string
	for _, m := range got {
		bodies = append(bodies, string(m.GetBody()))
		_ = consumer.Ack(context.Background(), m)
	}
	sort.Strings(bodies)
	if strings.Join(bodies, ",") != "go5-tx-commit,go5-tx-open" {
		problem("transactions: consumed %v, expected [go5-tx-commit go5-tx-open]", bodies)
	}
	mu.Lock()
	defer mu.Unlock()
	if checked["go5-tx-open"] == 0 {
		problem("transactions: go5-tx-open was never checked back (checked: %v)", checked)
	}
}
