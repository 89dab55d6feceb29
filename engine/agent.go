package engine

// Agent is a named agent that a run may delegate to or hand off to.
//
// Delegation: when any agent has Handoff false, runs are offered the tool
// agent, {"agent": NAME, "task": TEXT}. A call runs a sub-run: the agent,
// with a history that starts from the task, its own step limit and tools,
// and the session's memory; its answer is the call's result. The calls of
// one decision run in parallel. A sub-run's events carry its own run id
// (the parent's id, "/", the call's id), the agent's name, and the parent's
// run and call.
//
// Handoff: an agent with Handoff set is offered to runs of the other agents
// as a tool transfer_to_NAME; calling it ends the current agent's turn and
// the run goes on as that agent, with the whole conversation.
type Agent struct {
	Name        string
	Description string
	// System is the agent's system prompt.
	System string
	// Model decides for the agent; nil: the engine's Model (and ModelName).
	Model     Model
	ModelName string
	// Tools are the agent's tools; nil: all the engine's. A sub-run is
	// never offered a tool the run that delegated to it lacks.
	Tools *Registry
	// MaxSteps bounds each of the agent's runs; 0: the engine's.
	MaxSteps int
	// Handoff offers the agent as transfer_to_NAME instead of through the
	// tool agent.
	Handoff bool
}
