package main

// The proxy keeps the routes sends use (its route cache, Java's
// TopicRouteService settings) but never a "no such topic" answer: a raw
// SendMessage to a topic that does not exist yet is refused, and right after
// the topic is created over remoting the same send is accepted, then again
// from the cached route.

import (
	"context"
	"fmt"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// rawSend sends one NORMAL message through a raw SendMessage (the client's
// stubs: the client itself refuses a topic it has no route for) and returns
// the proxy's status.
func rawSend(endpoint, topic, body string) *v2.Status {
	conn, err := grpc.Dial(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fatal("dial %s: %v", endpoint, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "go-interop-raw")
	id := fmt.Sprintf("GOROUTE%025d", time.Now().UnixNano())
	resp, err := v2.NewMessagingServiceClient(conn).SendMessage(ctx, &v2.SendMessageRequest{
		Messages: []*v2.Message{{
			Topic: &v2.Resource{Name: topic},
			SystemProperties: &v2.SystemProperties{
				MessageId: id, MessageType: v2.MessageType_NORMAL,
				BodyEncoding: v2.Encoding_IDENTITY, BornTimestamp: timestamppb.Now(),
			},
			Body: []byte(body),
		}},
	})
	if err != nil {
		fatal("raw SendMessage to %s: %v", topic, err)
	}
	return resp.GetStatus()
}

func routeCache(endpoint, broker, topic string) {
	if st := rawSend(endpoint, topic, "before"); st.GetCode() == v2.Code_OK {
		problem("route cache: a send to %s, which does not exist yet, was accepted", topic)
	}
	if err := createTopic(broker, topic, "+message.type=NORMAL"); err != nil {
		problem("route cache: creating %s: %v", topic, err)
		return
	}
	for i, body := range []string{"after-1", "after-2"} {
		if st := rawSend(endpoint, topic, body); st.GetCode() != v2.Code_OK {
			problem("route cache: send %d to %s right after its creation: %v %s", i+1, topic,
				st.GetCode(), st.GetMessage())
		}
	}
}
