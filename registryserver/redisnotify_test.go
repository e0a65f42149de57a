package registryserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/redisnotify"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestPublishReachesOtherReplicaThroughRedis: two replicas on one
// storage that would read the change log only every hour; through Redis
// the other replica's search shows a publish without that wait.
func TestPublishReachesOtherReplicaThroughRedis(t *testing.T) {
	t.Parallel()
	opt, err := redis.ParseURL(testenv.Redis(t))
	if err != nil {
		t.Fatal(err)
	}
	channel := "jig-test:" + t.Name() + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
	st := memory.New()
	replica := func() http.Handler {
		client := redis.NewClient(opt)
		t.Cleanup(func() { _ = client.Close() })
		return publishHandler(t, st, registryserver.WithSearchRefresh(time.Hour),
			registryserver.WithChangeNotifier(redisnotify.New(client, channel)))
	}
	a, b := replica(), replica()
	for _, h := range []http.Handler{a, b} {
		if _, body := get(t, h, "/search?q=forms", pubAdmin); string(body) != `{"results":[]}` {
			t.Fatalf("before: %s", body)
		}
	}
	// b's subscription is up once a notification reaches it: publish
	// versions until one does.
	for i := 1; ; i++ {
		if i > 200 {
			_, body := get(t, b, "/search?q=forms", pubAdmin)
			t.Fatalf("the other replica never saw a publish: %s", body)
		}
		v := strconv.Itoa(i) + ".0.0"
		if r := post(t, a, pubPublish, form{archive: pkg(regJSON("@gated", v, `,"description":"Buttons and forms"`))}); r.status != 201 {
			t.Fatalf("publish %s: %d %s", v, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
		if _, body := get(t, b, "/search?q=forms", pubAdmin); strings.Contains(string(body), `"name":"ui-kit"`) {
			return
		}
	}
}
