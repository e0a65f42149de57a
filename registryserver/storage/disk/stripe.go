package disk

import "hash/fnv"

// stripeOf spreads keys over the lock stripes.
func stripeOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % lockStripes)
}
