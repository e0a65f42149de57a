package clientip_test

import (
	"fmt"

	"github.com/jigkit/jig/registryserver/internal/clientip"
)

func ExampleFromRequest() {
	xff := []string{"203.0.113.7, 198.51.100.1"}
	fmt.Println(clientip.FromRequest("10.0.0.5:41234", xff, 0))
	fmt.Println(clientip.FromRequest("10.0.0.5:41234", xff, 1))
	fmt.Println(clientip.FromRequest("10.0.0.5:41234", xff, clientip.TrustAll))
	fmt.Println(clientip.FromRequest("10.0.0.5:41234", []string{"bogus, 198.51.100.1"}, clientip.TrustAll))
	// Output:
	// 10.0.0.5
	// 198.51.100.1
	// 203.0.113.7
	// 10.0.0.5
}
