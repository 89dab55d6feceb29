package ui

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// instantCmds are the commands whose message comes at once, found in the
// names the runtime gives their functions (the compiler inlines some, so a
// name may carry its caller's around it); tests run them and feed their
// messages back, as Bubble Tea would. Every other command waits (a run's
// events, the gate, a timer) and is left to the test to stand in for.
var instantCmds = []string{
	"bubbletea.compactCmds[", ".compactCmds[", // tea.Batch and tea.Sequence
	"github.com/charmbracelet/bubbletea.Quit",
	".filterItems.func",
	"bubbles/textarea.Blink",
	"bubbles/textinput.Blink",
	"bubbles/cursor.Blink",
	".listSessions.func",
	".openSession.func",
	".closeBackend.func",
	".changeMemory.func",
	".doCommand.func",
	".listWorkflows.func",
	".updateIndex.func",
	".searchFor.func",
	".copyOut.func",
}

func cmdName(c tea.Cmd) string { return runtime.FuncForPC(reflect.ValueOf(c).Pointer()).Name() }

// cmdIs reports whether c's function is named with part.
func cmdIs(c tea.Cmd, part string) bool { return strings.Contains(cmdName(c), part) }

func instantCmd(c tea.Cmd) bool {
	name := cmdName(c)
	for _, p := range instantCmds {
		if strings.Contains(name, p) {
			return true
		}
	}
	if os.Getenv("AGENTTY_CMDS") != "" {
		fmt.Fprintln(os.Stderr, "waits:", name)
	}
	return false
}

var cmdType = reflect.TypeFor[tea.Cmd]()

// settle runs cmd and what follows from it while the commands are instant,
// feeding each message to m.Update; it returns how many messages it fed.
func settle(m *Model, cmd tea.Cmd) int {
	queue := []tea.Cmd{cmd}
	fed := 0
	for len(queue) > 0 && fed < 64 {
		c := queue[0]
		queue = queue[1:]
		if c == nil || !instantCmd(c) {
			continue
		}
		msg := c()
		if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == cmdType {
			for i := range v.Len() { // a batch or a sequence
				queue = append(queue, v.Index(i).Interface().(tea.Cmd))
			}
			continue
		}
		_, next := m.Update(msg)
		fed++
		queue = append(queue, next)
	}
	return fed
}

func runes(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }

// TestPickerFilters: / filters the sessions on their title and id, while
// typing and after enter.
func TestPickerFilters(t *testing.T) {
	var list []SessionInfo
	for i := range 300 {
		list = append(list, SessionInfo{
			ID: fmt.Sprintf("0mx2pick%04x", i), Title: fmt.Sprintf("task number %d", i), Model: "offline",
			Updated: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(-time.Duration(i) * time.Minute),
		})
	}
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(listedMsg{list: list})
	if m.picker == nil {
		t.Fatal("no picker")
	}
	if got := len(m.picker.VisibleItems()); got != 300 {
		t.Fatalf("before filtering %d items, want 300", got)
	}
	press := func(k tea.KeyMsg) {
		_, cmd := m.Update(k)
		settle(m, cmd)
	}
	check := func(when string) {
		t.Helper()
		items := m.picker.VisibleItems()
		if len(items) == 0 || len(items) >= 300 {
			t.Fatalf("%s: %d items shown", when, len(items))
		}
		found := false
		for _, it := range items {
			p := it.(pickItem)
			found = found || p.Title() == "task number 150"
			if !subsequence(p.FilterValue(), "150") {
				t.Errorf("%s: %q is shown", when, p.FilterValue())
			}
		}
		if !found {
			t.Errorf("%s: task number 150 is not shown", when)
		}
		if v := m.View(); strings.Contains(v, "300 items") {
			t.Errorf("%s: the picker still says 300 items:\n%s", when, v)
		}
	}
	for _, k := range []tea.KeyMsg{runes("/"), runes("1"), runes("5"), runes("0")} {
		press(k)
	}
	check("while typing /150")
	press(tea.KeyMsg{Type: tea.KeyEnter})
	check("after enter")

	// On the id: 0mx2pick00fa is task number 250.
	press(tea.KeyMsg{Type: tea.KeyEsc})
	if got := len(m.picker.VisibleItems()); got != 300 {
		t.Fatalf("esc did not clear the filter: %d items", got)
	}
	for _, k := range []tea.KeyMsg{runes("/"), runes("p"), runes("i"), runes("c"), runes("k"), runes("0"), runes("0"), runes("f"), runes("a")} {
		press(k)
	}
	items := m.picker.VisibleItems()
	if len(items) != 1 || items[0].(pickItem).ID != "0mx2pick00fa" {
		var ids []string
		for _, it := range items {
			ids = append(ids, it.(pickItem).ID)
		}
		t.Errorf("filtering on an id: %v", ids)
	}
}

// TestPickerSaysSteps counts a session's steps in words: "1 step", "2 steps".
func TestPickerSaysSteps(t *testing.T) {
	for n, want := range map[int]string{0: "· 0 steps", 1: "· 1 step", 2: "· 2 steps"} {
		got := pickItem{SessionInfo{ID: "s", Steps: n}}.Description()
		if !strings.HasSuffix(got, want) {
			t.Errorf("%d steps: %q, want it to end in %q", n, got, want)
		}
	}
}

// TestPickerHidesEvalSessions: the sessions evals made are left out, the
// title saying how many and that tab shows them; tab shows them, tab again
// hides them. A session's age is said as its age.
func TestPickerHidesEvalSessions(t *testing.T) {
	list := []SessionInfo{{ID: "0mx2mine", Title: "my own work", Age: "5m ago"}}
	for i := range 9 {
		list = append(list, SessionInfo{ID: fmt.Sprintf("0mx2eval%d", i), Title: fmt.Sprintf("eval case %d", i), Origin: "eval"})
	}
	m := New(Config{Style: "notty"})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(listedMsg{list: list})
	v := m.View()
	if !strings.Contains(v, "my own work") || strings.Contains(v, "eval case") || !strings.Contains(v, "tab shows 9 eval sessions") || !strings.Contains(v, "updated 5m ago") {
		t.Fatalf("the picker at first:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if v = m.View(); !strings.Contains(v, "eval case 3 [eval]") || !strings.Contains(v, "tab hides eval sessions") {
		t.Fatalf("after tab:\n%s", v)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyTab})
	if v = m.View(); strings.Contains(v, "eval case") {
		t.Fatalf("after tab again:\n%s", v)
	}
}
