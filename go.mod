module github.com/jigkit/jig

go 1.26.8

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/google/go-cmp v0.7.0
)
