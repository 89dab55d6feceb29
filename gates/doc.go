// Package gates holds what answers a run's pauses away from the console,
// shared by the front ends and the headless commands: the headless gate
// (approvals refused or taken from --yes), the replay gate, the debug gate
// of --break (breakpoints asked on the terminal), the asker of ask_user
// on a terminal, and --answers' file. It imports the engine, config (for
// bounded reads) and what the engine names, never app or a front end.
package gates
