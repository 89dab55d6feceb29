// Package console is the front end behind the Bubble Tea console (ui): it
// opens sessions for it (new, resumed, --continue, read-only when another
// process writes one), gives it the backend it drives (runs, the picker,
// slash commands, rewinds, ! commands, settings kept with the session,
// the input history and drafts, search), and follows a session another
// process runs (agentty watch). It is built from app's kit and imports no
// other front end.
package console
