// Package fleet is the front end of agentty top and agentty cancel: the
// fleet's snapshot from the bus (workers, their runs, the queues, the
// pauses no one answered), the screen that shows it (ui.Top), and a run
// cancelled wherever it is. It is built from app's kit and imports no
// other front end.
package fleet
