package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// ReportFiles are the files a suite's run writes its reports to ("" for
// none): JUnit XML, and the JSON report.
type ReportFiles struct{ JUnit, JSON string }

// WriteReports writes the reports of a suite's results to the files f
// names; an error names the flag of the file that failed.
func WriteReports(f ReportFiles, suite *Suite, model string, results []*CaseResult, began time.Time, took time.Duration) error {
	if f.JUnit != "" {
		var b bytes.Buffer
		if err := WriteJUnit(&b, suite, results, took, began); err != nil {
			return fmt.Errorf("--junit: %v", err)
		}
		if err := os.WriteFile(f.JUnit, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--junit: %v", err)
		}
	}
	if f.JSON != "" {
		rep := Tally(results)
		rep.Suite, rep.File, rep.Description, rep.Model, rep.DurationS, rep.Cases = suite.Name, suite.File, suite.Description, model, took.Seconds(), results
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("--json: %v", err)
		}
		if err := os.WriteFile(f.JSON, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %v", err)
		}
	}
	return nil
}
