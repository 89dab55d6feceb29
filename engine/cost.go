package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// StopBudget: the run spent its budget (Config.MaxCost or MaxTokens); it
// stops before the next decision, saying what it spent.
const StopBudget StopReason = "budget"

// Price is what a model costs, in US dollars per million tokens: of the
// prompt, of the part of the prompt the server had cached (Input when 0),
// and of the completion.
type Price struct {
	Input       float64 `json:"input"`
	CachedInput float64 `json:"cached_input,omitempty"`
	Output      float64 `json:"output"`
}

// Of is the cost of u at p, in US dollars.
func (p Price) Of(u Usage) float64 {
	cached := min(max(u.CachedTokens, 0), u.PromptTokens)
	rate := p.CachedInput
	if rate == 0 {
		rate = p.Input
	}
	return (float64(u.PromptTokens-cached)*p.Input + float64(cached)*rate + float64(u.CompletionTokens)*p.Output) / 1e6
}

// priced is u with its cost, when the server did not say it and the
// model's price is known.
func (r *run) priced(u Usage, model string) Usage {
	if u.Priced == 0 && r.e.cfg.Prices != nil {
		if p, ok := r.e.cfg.Prices(model); ok {
			u.Cost, u.Priced = p.Of(u), 1
		}
	}
	return u
}

// FormatCost says a cost: "$0.0123", "$0.01 + unknown" when some of the
// calls summed had no price, "cost unknown" when none had. calls is how
// many model calls the cost sums (priced of them had a price).
func FormatCost(cost float64, priced, calls int) string {
	if calls > 0 && priced == 0 {
		return "cost unknown"
	}
	s := strconv.FormatFloat(cost, 'f', costDigits(cost), 64)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1] // $0.0026, not $0.00260; cents kept
	}
	s = "$" + s
	if priced < calls {
		s += " + unknown"
	}
	return s
}

// CostString says what the calls u sums cost ("-" for no call), and
// what the replayed of them cost when they were recorded: "$0.00
// (replayed $0.0433)".
func (u Usage) CostString() string {
	if u.Calls == 0 {
		return "-"
	}
	if u.ReplayedCost > 0 {
		return FormatCost(u.Cost, u.Priced, u.Calls) + " (replayed " + FormatCost(u.ReplayedCost, 1, 1) + ")"
	}
	return FormatCost(u.Cost, u.Priced, u.Calls)
}

// Charged is what a budget counts of u: the cost spent, and what the
// replayed calls cost when they were recorded.
func (u Usage) Charged() float64 { return u.Cost + u.ReplayedCost }

// costDigits shows a cost to about three significant digits, at least
// cents.
func costDigits(c float64) int {
	switch {
	case c == 0 || c >= 1:
		return 2
	case c >= 0.1:
		return 3
	case c >= 0.01:
		return 4
	case c >= 0.001:
		return 5
	}
	return 6
}

// overBudget says why the run must stop before its next decision (nil:
// it may go on): what the run, its sub-runs with it, has spent since it
// started, against Config.MaxCost and MaxTokens.
func (r *run) overBudget() error {
	if err := r.overAgentBudget(); err != nil {
		return err
	}
	cfg := &r.e.cfg
	if cfg.MaxCost <= 0 && cfg.MaxTokens <= 0 {
		return nil
	}
	return budgetSpent("the run", "the run's", "", cfg.MaxCost, cfg.MaxTokens, r.runSpent(), r.prof.modelName)
}

// runSpent is what the top-level run, its sub-runs with it, has spent
// since it started.
func (r *run) runSpent() Usage {
	now, from := r.spent()
	return Usage{PromptTokens: now.PromptTokens - from.PromptTokens, CompletionTokens: now.CompletionTokens - from.CompletionTokens,
		Cost: now.Cost - from.Cost, ReplayedCost: now.ReplayedCost - from.ReplayedCost, Priced: now.Priced - from.Priced, Calls: now.Calls - from.Calls}
}

// wouldOverspend says why the decision about to be asked for must not be
// (nil: it may): its prompt alone, whose size is known before the call,
// would take what was spent past a token budget or, at the model's price,
// past a cost budget (the agent's or the run's). What the answer adds is
// known only after the call; overBudget, before the next one, sees it.
// The prompt's size is estimated, and, once the server has counted one of
// the run's requests, taken from its count.
func (r *run) wouldOverspend() error {
	p, cfg := &r.prof, &r.e.cfg
	if p.maxCost <= 0 && p.maxTokens <= 0 && cfg.MaxCost <= 0 && cfg.MaxTokens <= 0 {
		return nil
	}
	prompt := r.reqTokens
	if r.sized[1] > 0 { // the server counts the way it counts: go from its last count
		prompt = max(0, r.sized[1]+r.reqTokens-r.sized[0])
	}
	next := r.priced(Usage{PromptTokens: prompt}, p.modelName)
	if err := wouldPass("agent "+p.agent+"'s", " a run", p.maxCost, p.maxTokens, r.ownUsage, next); err != nil {
		return err
	}
	return wouldPass("the run's", "", cfg.MaxCost, cfg.MaxTokens, r.runSpent(), next)
}

// wouldPass says why a request whose prompt is next would take spent past
// a budget of maxCost (when next's price is known) or maxTokens.
func wouldPass(whose, per string, maxCost float64, maxTokens int, spent, next Usage) error {
	tokens := spent.PromptTokens + spent.CompletionTokens
	switch {
	case maxTokens > 0 && tokens+next.PromptTokens > maxTokens:
		return fmt.Errorf("%s token budget of %d%s would be passed by the next request: %d tokens used, and its prompt is about %d more", whose, maxTokens, per, tokens, next.PromptTokens)
	case maxCost > 0 && next.Priced == 1 && spent.Charged()+next.Cost > maxCost:
		return fmt.Errorf("%s cost budget of %s%s would be passed by the next request: %s spent, and its prompt costs about %s more", whose, FormatCost(maxCost, 1, 1), per, FormatCost(spent.Charged(), 1, 1), FormatCost(next.Cost, 1, 1))
	}
	return nil
}

// budgetSpent says why spending u is past a budget of maxCost and
// maxTokens (0: none) for who (whose: its possessive; per: what the budget
// is for, such as " a run"), nil if it is not.
func budgetSpent(who, whose, per string, maxCost float64, maxTokens int, u Usage, model string) error {
	tokens := u.PromptTokens + u.CompletionTokens
	switch {
	case maxTokens > 0 && tokens >= maxTokens:
		return fmt.Errorf("%s token budget of %d%s is spent: %d tokens used", whose, maxTokens, per, tokens)
	case maxCost > 0 && u.Charged() >= maxCost:
		return fmt.Errorf("%s cost budget of %s%s is spent: %s", whose, FormatCost(maxCost, 1, 1), per, FormatCost(u.Charged(), 1, 1))
	case maxCost > 0 && u.Priced < u.Calls:
		return fmt.Errorf("%s has a cost budget of %s, and the cost of model %q is not known: give its price in the config's models key", who, FormatCost(maxCost, 1, 1), model)
	}
	return nil
}

// overAgentBudget says why the run must stop for its agent's own budget
// (the agent file's max_cost, max_tokens): what this run's own model calls
// spent.
func (r *run) overAgentBudget() error {
	p := &r.prof
	if p.maxCost <= 0 && p.maxTokens <= 0 {
		return nil
	}
	return budgetSpent("agent "+p.agent, "agent "+p.agent+"'s", " a run", p.maxCost, p.maxTokens, r.ownUsage, p.modelName)
}

// spent is the session's usage now, and when the top-level run started.
func (r *run) spent() (now, from Usage) {
	if r.tree == nil {
		return r.root.Usage, r.root.budgetFrom
	}
	r.tree.mu.Lock()
	defer r.tree.mu.Unlock()
	return r.tree.root.Usage, r.tree.root.budgetFrom
}
