package engine

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// NewSchemaCompiler returns a JSON Schema compiler that loads nothing: a
// $ref to anything outside the document (file://, http://, standard
// input, a FIFO that would block the read for ever) is an error at once.
// Schemas are someone else's text (an agent file's, an MCP server's, a
// workflow's, an eval suite's), and agentty does no I/O a schema asks
// for. Refs inside the document (#/$defs/x) and the standard drafts'
// meta-schemas, which the library holds, still work.
func NewSchemaCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	return c
}

// refuseLoader is a jsonschema.URLLoader that loads no URL.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema $ref %s: agentty loads no schema from outside the document", url)
}
