package ui

import "github.com/charmbracelet/bubbles/key"

// keyMap holds every key of the console: the panes match keys against it
// with key.Matches, and the help bubble shows it. The bindings after the
// blank line are the panes' movement and the forms' keys, matched but not
// listed in the help.
type keyMap struct {
	Send, Newline, History, Focus, Scroll, Expand, Detail  key.Binding
	Fold, Fork, BreakHere                                  key.Binding
	Respond, Allow, Inspect                                key.Binding // at a pause: answer for the tool, allow for the session, the request
	LeaveUnrun, RunAgain                                   key.Binding // at the pause of a call an earlier process left interrupted
	StepMode, Sessions, Continue, Cancel, Quit, Help, Back key.Binding
	Search, SearchScope                                    key.Binding // the search and its scope
	Mouse                                                  key.Binding // the mouse to the terminal and back
	Zoom                                                   key.Binding // the focused pane, the whole width (and back)
	Step, RunCall, Approve, Run, Edit, Skip, Deny, Abort   key.Binding
	MemAdd, MemEdit, MemDelete                             key.Binding
	Commands, Complete, Choose, RunCommand, CloseList      key.Binding // the slash commands and their list
	// What the help shows in place of Send and Cancel in a followed
	// session, where only slash commands are sent and ctrl+c has no run
	// to cancel. They are shown, not matched: Send, Cancel and Quit are.
	FollowCommands, FollowQuit key.Binding

	HistoryPrev, HistoryNext, NextPane, PrevPane key.Binding // History and Focus, one way each
	PageUp, PageDown                             key.Binding // Scroll, one way each; a page in the details
	Up, Down, Top, Bottom                        key.Binding // a line, the start, the end
	Close                                        key.Binding // the details
	Save                                         key.Binding // the argument editor: check and go on
	Submit, Dismiss                              key.Binding // the memory form; Dismiss closes a form, the editor, the help
	Open, ClosePicker                            key.Binding // the picker
	CompletePrev, CompleteNext                   key.Binding // Choose, one way each
	SendAnswer, Unanswered                       key.Binding // a question of the run
}

func newKeyMap() keyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	keys := func(ks ...string) key.Binding { return key.NewBinding(key.WithKeys(ks...)) }
	return keyMap{
		HistoryPrev:  keys("up"),
		HistoryNext:  keys("down"),
		NextPane:     keys("tab"),
		PrevPane:     keys("shift+tab"),
		PageUp:       keys("pgup"),
		PageDown:     keys("pgdown"),
		Up:           keys("up", "k"),
		Down:         keys("down", "j"),
		Top:          keys("home", "g"),
		Bottom:       keys("end", "G"),
		Close:        keys("esc", "q", "enter"),
		Save:         keys("ctrl+s"),
		Submit:       keys("enter"),
		Dismiss:      keys("esc"),
		Open:         keys("enter"),
		ClosePicker:  keys("esc", "ctrl+c"),
		CompletePrev: keys("up", "ctrl+p"),
		CompleteNext: keys("down", "ctrl+n"),

		Send:       b([]string{"enter"}, "enter", "send"),
		Newline:    b([]string{"alt+enter", "ctrl+j"}, "alt+enter", "newline"),
		History:    b([]string{"up", "down"}, "↑/↓", "input history"),
		Focus:      b([]string{"tab", "shift+tab"}, "tab", "next pane"),
		Scroll:     b([]string{"pgup", "pgdown"}, "pgup/pgdn", "scroll chat"),
		Expand:     b([]string{"ctrl+x"}, "ctrl+x", "expand tool calls"),
		Detail:     b([]string{"enter"}, "enter", "step details (timeline)"),
		Fold:       b([]string{" ", "z"}, "space/z", "fold agent (timeline)"),
		Fork:       b([]string{"f"}, "f enter", "fork here (timeline)"),
		BreakHere:  b([]string{"b"}, "b enter", "break here (timeline)"),
		Respond:    b([]string{"m"}, "m", "answer for the tool"),
		Allow:      b([]string{"a"}, "a", "allow for this session"),
		Inspect:    b([]string{"i"}, "i", "inspect the request"),
		StepMode:   b([]string{"ctrl+t"}, "ctrl+t", "step mode"),
		Sessions:   b([]string{"ctrl+o"}, "ctrl+o", "sessions"),
		Search:     b([]string{"ctrl+f"}, "ctrl+f", "search sessions and files"),
		Mouse:      b([]string{"ctrl+g"}, "ctrl+g", "release the mouse (select)"),
		Zoom:       b([]string{"ctrl+z"}, "ctrl+z", "zoom pane"),
		Continue:   b([]string{"ctrl+r"}, "ctrl+r", "continue interrupted run"),
		Cancel:     b([]string{"ctrl+c"}, "ctrl+c", "cancel run / quit"),
		Quit:       b([]string{"ctrl+d"}, "ctrl+d", "quit"),
		Help:       b([]string{"?"}, "?", "all keys"),
		Back:       b([]string{"esc"}, "esc", "back to input"),
		Step:       b([]string{"enter"}, "enter", "step"),
		RunCall:    b([]string{"enter"}, "enter", "run the call"),
		SendAnswer: b([]string{"enter"}, "enter", "send the answer"),
		Unanswered: b([]string{"esc"}, "esc", "leave it unanswered"),
		Approve:    b([]string{"enter", "y"}, "enter/y", "approve"),
		Run:        b([]string{"c"}, "c", "run to the end"),
		Edit:       b([]string{"e"}, "e", "edit args"),
		Skip:       b([]string{"s"}, "s", "skip call"),
		Deny:       b([]string{"n"}, "n", "deny"),
		LeaveUnrun: b([]string{"enter", "n"}, "enter/n", "leave it unrun (answered as interrupted)"),
		RunAgain:   b([]string{"R"}, "R", "run it again"),
		Abort:      b([]string{"esc"}, "esc", "abort run"),
		MemAdd:     b([]string{"a"}, "a", "add fact"),
		MemEdit:    b([]string{"e"}, "e", "edit fact"),
		MemDelete:  b([]string{"d"}, "d", "delete fact"),
		// "/" is text the input takes; typed first, it opens the list.
		Commands:       b([]string{"/"}, "/", "commands (// for a /…)"),
		Complete:       b([]string{"tab"}, "tab", "complete"),
		Choose:         b([]string{"up", "down"}, "↑/↓", "choose"),
		RunCommand:     b([]string{"enter"}, "enter", "run"),
		CloseList:      b([]string{"esc"}, "esc", "close"),
		FollowCommands: b([]string{"/"}, "/", "commands"),
		FollowQuit:     b([]string{"ctrl+c", "ctrl+d"}, "ctrl+c", "quit"),
		// In the search, tab changes the scope (the input has no tab).
		SearchScope: b([]string{"tab"}, "tab", "scope"),
	}
}

// pauseKind is what a pause holds back, which decides the keys that apply.
type pauseKind int

const (
	notPaused             pauseKind = iota
	pausedDecide                    // step mode, before a decision
	pausedCall                      // step mode, before a tool call
	pausedApprove                   // a tool call whose policy is ask, outside step mode
	pausedApproveStepping           // the same in step mode, where c applies too
	pausedQuestion                  // the run asks the person (ask_user)
	pausedRerun                     // a call an earlier process started and left without a result
)

// kindOf returns the kind of a pause (nil: none).
func kindOf(p *gateRequest, stepping bool) pauseKind {
	switch {
	case p == nil:
		return notPaused
	case p.pending.Question != nil:
		return pausedQuestion
	case p.pending.ToolCall == nil:
		return pausedDecide
	case p.pending.Rerun:
		return pausedRerun
	case !p.pending.Approval:
		return pausedCall
	case stepping:
		return pausedApproveStepping
	}
	return pausedApprove
}

// helpKeys adapts the key map to the help bubble for the current context.
type helpKeys struct {
	k      keyMap
	pause  pauseKind
	focus  focus
	narrow bool // fewer, longer columns
	slash  bool // the list of commands is open
	// follow: the console follows a session read-only: the keys that
	// would send, start or change something are not shown; search: the
	// search is there (a followed session may have none).
	follow, search bool
}

func (h helpKeys) ShortHelp() []key.Binding {
	switch h.pause {
	case pausedQuestion:
		return []key.Binding{h.k.SendAnswer, h.k.Unanswered, h.k.Cancel}
	case pausedDecide:
		return []key.Binding{h.k.Step, h.k.Inspect, h.k.Run, h.k.Abort, h.k.Help}
	case pausedCall:
		return []key.Binding{h.k.RunCall, h.k.Run, h.k.Edit, h.k.Respond, h.k.Skip, h.k.Deny, h.k.Abort, h.k.Help}
	case pausedApprove:
		return []key.Binding{h.k.Approve, h.k.Allow, h.k.Edit, h.k.Respond, h.k.Skip, h.k.Deny, h.k.Abort, h.k.Help}
	case pausedApproveStepping:
		return []key.Binding{h.k.Approve, h.k.Allow, h.k.Run, h.k.Edit, h.k.Respond, h.k.Skip, h.k.Deny, h.k.Abort, h.k.Help}
	case pausedRerun:
		return []key.Binding{h.k.LeaveUnrun, h.k.RunAgain, h.k.Edit, h.k.Respond, h.k.Abort, h.k.Help}
	}
	if h.slash {
		return []key.Binding{h.k.Complete, h.k.Choose, h.k.RunCommand, h.k.CloseList, h.k.Help}
	}
	if h.follow {
		switch h.focus {
		case focusTimeline:
			return []key.Binding{h.k.Detail, h.k.Fold, h.k.Focus, h.k.Back, h.k.StepMode, h.k.FollowQuit, h.k.Help}
		case focusMemory:
			return []key.Binding{h.k.Focus, h.k.Back, h.k.FollowQuit, h.k.Help}
		}
		// Quit and help before what a narrow terminal may cut.
		return []key.Binding{h.k.Focus, h.k.StepMode, h.k.FollowQuit, h.k.Help, h.k.Scroll, h.k.FollowCommands}
	}
	switch h.focus {
	case focusTimeline:
		return []key.Binding{h.k.Detail, h.k.Fork, h.k.BreakHere, h.k.Fold, h.k.Focus, h.k.Back, h.k.StepMode, h.k.Zoom, h.k.Help}
	case focusMemory:
		return []key.Binding{h.k.MemAdd, h.k.MemEdit, h.k.MemDelete, h.k.Focus, h.k.Back, h.k.Zoom, h.k.Help}
	}
	return []key.Binding{h.k.Send, h.k.Newline, h.k.Focus, h.k.StepMode, h.k.Cancel, h.k.Zoom, h.k.Help}
}

func (h helpKeys) FullHelp() [][]key.Binding {
	if h.pause == pausedRerun { // the keys of this pause only: enter and y mean otherwise elsewhere
		return [][]key.Binding{{h.k.LeaveUnrun, h.k.RunAgain, h.k.Edit, h.k.Respond, h.k.Abort}, {h.k.Scroll, h.k.Focus, h.k.Quit, h.k.Help}}
	}
	if h.follow {
		return h.followFullHelp()
	}
	cols := [][]key.Binding{
		{h.k.Send, h.k.Newline, h.k.History, h.k.Commands, h.k.Focus, h.k.Back},
		{h.k.Scroll, h.k.Expand, h.k.Detail, h.k.Fold, h.k.Fork, h.k.BreakHere, h.k.Sessions, h.k.Search, h.k.Continue},
		{h.k.StepMode, h.k.Step, h.k.Approve, h.k.Run, h.k.Edit, h.k.Respond, h.k.Allow, h.k.Inspect, h.k.Skip, h.k.Deny, h.k.Abort},
		// Their keys are the last the fuzzer's list of keys takes from
		// here: the committed seeds keep the keys they pressed.
		{h.k.MemAdd, h.k.MemEdit, h.k.MemDelete, h.k.Mouse, h.k.Zoom, h.k.Cancel, h.k.Quit, h.k.Help},
	}
	if h.narrow { // two columns of about the same height: the screen's keys on the left
		left := append(append(cols[0], cols[1]...), h.k.Mouse, h.k.Zoom)
		right := append(cols[2], h.k.MemAdd, h.k.MemEdit, h.k.MemDelete, h.k.Cancel, h.k.Quit, h.k.Help)
		return [][]key.Binding{left, right}
	}
	return cols
}

// followFullHelp is the full help of a followed session: what can be done
// there (look, search, answer its runs' pauses, quit), and not what would
// send a task, start a run or change the session.
func (h helpKeys) followFullHelp() [][]key.Binding {
	look := []key.Binding{h.k.Detail, h.k.Fold}
	if h.search {
		look = append(look, h.k.Search)
	}
	cols := [][]key.Binding{
		{h.k.FollowCommands, h.k.Focus, h.k.Back, h.k.Scroll, h.k.Zoom, h.k.Expand, h.k.Mouse},
		append(look, h.k.StepMode),
		{h.k.Step, h.k.Approve, h.k.Run, h.k.Edit, h.k.Skip, h.k.Deny, h.k.Abort},
		{h.k.FollowQuit, h.k.Help},
	}
	if h.narrow {
		return [][]key.Binding{append(cols[0], cols[1]...), append(cols[2], cols[3]...)}
	}
	return cols
}
