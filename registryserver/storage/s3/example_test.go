package s3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

func ExampleNew() {
	ctx := context.Background()
	// A stand-in for a real endpoint such as
	// https://<account>.r2.cloudflarestorage.com.
	_, srv := newFakeServer(true)
	defer srv.Close()

	st, err := s3.New(ctx, s3.Config{
		Endpoint:        srv.URL,
		Bucket:          "bucket",
		Region:          "us-east-1",
		AccessKeyID:     "access-key",
		SecretAccessKey: "secret-key",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	body := `{"versions":["1.0.0"]}`
	if err := st.Put(ctx, "@main/runtimes/node/versions.json", strings.NewReader(body), int64(len(body))); err != nil {
		fmt.Println(err)
		return
	}
	rc, info, err := st.Get(ctx, "@main/runtimes/node/versions.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	fmt.Println(string(data), info.Size)
	// Output: {"versions":["1.0.0"]} 22
}

func ExampleStorage_PutIf() {
	ctx := context.Background()
	_, srv := newFakeServer(true)
	defer srv.Close()
	st, err := s3.New(ctx, s3.Config{Endpoint: srv.URL, Bucket: "bucket", Region: "us-east-1", AccessKeyID: "a", SecretAccessKey: "s"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Two replicas publishing the same version: one wins.
	const key = "@main/runtimes/node/1.0.0/registry.json"
	_, err = st.PutIf(ctx, key, strings.NewReader("{}"), 2, "")
	fmt.Println(err)
	_, err = st.PutIf(ctx, key, strings.NewReader("{}"), 2, "")
	fmt.Println(errors.Is(err, storage.ErrPrecondition))
	// Output:
	// <nil>
	// true
}

func ExampleNew_missingBucket() {
	_, err := s3.New(context.Background(), s3.Config{Endpoint: "https://acct.r2.cloudflarestorage.com", Region: "auto"})
	fmt.Println(err)
	// Output: s3: no bucket configured; set S3_BUCKET
}
