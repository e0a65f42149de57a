module github.com/jigkit/jig

go 1.26.8

require github.com/Masterminds/semver/v3 v3.5.0

require golang.org/x/sync v0.23.0 // indirect
