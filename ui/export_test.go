package ui

// CheckFrame lets the external tests (package ui_test) check frames the way
// the internal ones do.
var CheckFrame = checkFrame
