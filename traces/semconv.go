package traces

import "go.opentelemetry.io/otel/attribute"

// The attribute keys and values of the OpenTelemetry semantic conventions for
// generative AI, v1.41.0 (status: Development):
// https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ and
// .../gen-ai-agent-spans/. Go's semconv packages after v1.41.0 no longer carry
// the GenAI keys, so they are declared here, in one place.
const (
	SemconvVersion = "1.41.0"

	KeyOperationName  = attribute.Key("gen_ai.operation.name")
	KeyProviderName   = attribute.Key("gen_ai.provider.name")
	KeyAgentName      = attribute.Key("gen_ai.agent.name")
	KeyConversationID = attribute.Key("gen_ai.conversation.id")
	KeyRequestModel   = attribute.Key("gen_ai.request.model")
	KeyResponseModel  = attribute.Key("gen_ai.response.model")
	KeyFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	KeyInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	KeyOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	KeyToolName       = attribute.Key("gen_ai.tool.name")
	KeyToolCallID     = attribute.Key("gen_ai.tool.call.id")
	KeyToolType       = attribute.Key("gen_ai.tool.type")
	KeyToolArguments  = attribute.Key("gen_ai.tool.call.arguments")
	KeyToolResult     = attribute.Key("gen_ai.tool.call.result")
	KeyInputMessages  = attribute.Key("gen_ai.input.messages")
	KeyOutputMessages = attribute.Key("gen_ai.output.messages")
	KeySystemInstruct = attribute.Key("gen_ai.system_instructions")
	KeyErrorType      = attribute.Key("error.type") // general conventions
	OpInvokeAgent     = "invoke_agent"
	OpChat            = "chat"
	OpExecuteTool     = "execute_tool"
	OpInvokeWorkflow  = "invoke_workflow"
	ToolTypeFunction  = "function"
	ToolTypeExtension = "extension"
	FinishStop        = "stop"
	FinishToolCalls   = "tool_calls"
	ErrorTypeOther    = "_OTHER"
	defaultAgentName  = "agentty"
	agenttyKeyPrefix  = "agentty."
)

// agentty's own attributes, beside the conventions' (the conventions leave
// these facts unnamed).
const (
	KeyStopReason      = attribute.Key(agenttyKeyPrefix + "run.stop_reason")
	KeySteps           = attribute.Key(agenttyKeyPrefix + "run.steps")
	KeyInterrupted     = attribute.Key(agenttyKeyPrefix + "run.interrupted")
	KeyRunID           = attribute.Key(agenttyKeyPrefix + "run.id")
	KeyParentRunID     = attribute.Key(agenttyKeyPrefix + "parent_run.id")
	KeyStep            = attribute.Key(agenttyKeyPrefix + "step")
	KeyAttempts        = attribute.Key(agenttyKeyPrefix + "attempts")
	KeyUsageEstimated  = attribute.Key(agenttyKeyPrefix + "usage.estimated")
	KeyCost            = attribute.Key(agenttyKeyPrefix + "usage.cost_usd") // what the call cost, when known
	KeyToolStatus      = attribute.Key(agenttyKeyPrefix + "tool.status")
	KeyToolTruncated   = attribute.Key(agenttyKeyPrefix + "tool.truncated")
	KeyToolDurationMS  = attribute.Key(agenttyKeyPrefix + "tool.duration_ms")
	KeyRetryAttempt    = attribute.Key(agenttyKeyPrefix + "retry.attempt")
	KeyRetryDelayMS    = attribute.Key(agenttyKeyPrefix + "retry.delay_ms")
	KeyRetryCause      = attribute.Key(agenttyKeyPrefix + "retry.cause")
	KeyRetryStatus     = attribute.Key(agenttyKeyPrefix + "retry.http_status")
	KeyRetryOp         = attribute.Key(agenttyKeyPrefix + "retry.op")
	KeyGateAt          = attribute.Key(agenttyKeyPrefix + "gate.at")
	KeyGateReason      = attribute.Key(agenttyKeyPrefix + "gate.reason")
	KeyGateAction      = attribute.Key(agenttyKeyPrefix + "gate.action")
	KeyMemoryOp        = attribute.Key(agenttyKeyPrefix + "memory.op")
	KeyMemoryKey       = attribute.Key(agenttyKeyPrefix + "memory.key")
	KeyMemoryValue     = attribute.Key(agenttyKeyPrefix + "memory.value")
	KeyMemorySource    = attribute.Key(agenttyKeyPrefix + "memory.source")
	KeyTrimmedMessages = attribute.Key(agenttyKeyPrefix + "context.dropped_messages")
	KeyTrimmedTokens   = attribute.Key(agenttyKeyPrefix + "context.dropped_tokens")
	KeyDroppedMessages = attribute.Key(agenttyKeyPrefix + "input.dropped_messages")
	KeyGuardrailName   = attribute.Key(agenttyKeyPrefix + "guardrail.name")
	KeyRejectReason    = attribute.Key(agenttyKeyPrefix + "answer.rejected_reason")
	KeyAnsweredBy      = attribute.Key(agenttyKeyPrefix + "tool.answered_by")
	KeyWorkflowName    = attribute.Key(agenttyKeyPrefix + "workflow.name")
	KeyWorkflowStep    = attribute.Key(agenttyKeyPrefix + "workflow.step")
	KeyHookEvent       = attribute.Key(agenttyKeyPrefix + "hook.event")
	KeyHookCommand     = attribute.Key(agenttyKeyPrefix + "hook.command")
	KeyHookDecision    = attribute.Key(agenttyKeyPrefix + "hook.decision")
	KeyHookExit        = attribute.Key(agenttyKeyPrefix + "hook.exit")
	KeyHookDurationMS  = attribute.Key(agenttyKeyPrefix + "hook.duration_ms")

	EventRetry          = "retry"
	EventGatePaused     = "gate_paused"
	EventGateResumed    = "gate_resumed"
	EventMemoryChanged  = "memory_changed"
	EventContextTrimmed = "context_trimmed"
	EventGuardrail      = "guardrail"
	EventAnswerRejected = "answer_rejected"
	EventHook           = "hook"
)
