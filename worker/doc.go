// Package worker is the front end that carries out runs queued on NATS
// JetStream (agentty worker, agentty serve): it takes a pool's run
// requests, runs each with the kit app builds (app.Build), continues the
// runs a dead worker left from their journal, beats, answers cancels,
// asks a console at a pause (through the bus), and drains when told to
// stop. It imports app and the rooms below it, never another front end.
package worker
