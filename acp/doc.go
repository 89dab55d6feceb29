// Package acp is the front end that makes agentty an editor's agent over
// the Agent Client Protocol (agentty acp): JSON-RPC on stdio, through the
// ACP SDK. It is built from app's kit and imports no other front end.
package acp
