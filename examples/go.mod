module github.com/jigkit/jig/examples

go 1.26.8

require github.com/jigkit/jig v0.0.0

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace github.com/jigkit/jig => ../
