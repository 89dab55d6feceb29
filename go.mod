module github.com/agentty/agentty

go 1.26.8

require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

require (
	github.com/dlclark/regexp2 v1.11.5 // indirect
	golang.org/x/text v0.30.0 // indirect
)
