package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/jigkit/jig/registryserver/webhook"
)

func ExampleVerify() {
	body := []byte(`{"event":"uploaded","name":"ui-kit","version":"1.0.0","namespace":"@company","timestamp":"2025-11-07T10:30:00.000Z","path":"@company/features/ui-kit/1.0.0"}`)
	sig := webhook.Sign("my-secret", body)
	fmt.Println(webhook.Verify("my-secret", body, sig))
	fmt.Println(webhook.Verify("other", body, sig))
	// Output:
	// true
	// false
}

func ExampleDispatcher() {
	received := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if webhook.Verify("my-secret", body, r.Header.Get("X-Webhook-Signature")) {
			received <- r.Header.Get("X-Webhook-Event")
		}
	}))
	defer srv.Close()

	cfg, err := webhook.Parse([]byte(`{"webhooks":[{"url":"` + srv.URL + `","secret":"my-secret",
		"events":["uploaded","version.created"],"enabled":true,"description":"example"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d, err := webhook.New(cfg.Webhooks)
	if err != nil {
		fmt.Println(err)
		return
	}
	d.Notify(webhook.Events("ui-kit", "1.0.0", "@company", "@company/features/ui-kit/1.0.0", time.Now())...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = d.Close(ctx) // drains the queue
	close(received)
	for ev := range received {
		fmt.Println(ev)
	}
	// Output:
	// uploaded
	// version.created
}
