package registryserver_test

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/jigkit/jig/registryserver"
)

func ExampleAuthConfig_Describe() {
	sum := sha256.Sum256([]byte("ci-secret"))
	a, err := registryserver.ParseAuthConfig([]byte(fmt.Sprintf(`{
	  "@main": [],
	  "@team": [
	    {"token": "read-secret", "mark": "readers"},
	    {"tokenSha256": "%x", "publish": true, "mark": "CI", "expiresAt": "2026-01-01"}
	  ],
	  "BAD": []
	}`, sum)))
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, ns := range a.Describe(now) {
		fmt.Println(ns.Namespace, "public:", ns.Public)
		for _, t := range ns.Tokens {
			fmt.Println(" ", t.ID, "publish:", t.Publish, "mark:", t.Mark, "expired:", t.Expired, "in clear:", t.InClear)
		}
	}
	fmt.Println(len(a.Warnings()), "namespace rejected")
	// Output:
	// @main public: true
	// @team public: false
	//   f0fd6c09405c publish: false mark: readers expired: false in clear: true
	//   f82da6e2b2e5 publish: true mark: CI expired: true in clear: false
	// 1 namespace rejected
}
