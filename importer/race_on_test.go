//go:build race

package importer

// raceEnabled says the tests run under the race detector, which makes
// decoding hundreds of megabytes of JSON take minutes.
const raceEnabled = true
