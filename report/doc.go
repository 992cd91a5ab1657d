// Package report renders a verdict.Report for people and for machines:
//
//   - a live console line per scenario as it finishes (Progress, WriteLine) and a summary
//     table per target with the details of every failing result (WriteSummary);
//   - in the console, Markdown and HTML alike: the causes several results share, read
//     from their evidence (Causes), leading the failures; and, where results are N/A,
//     what to declare next (DeclareNext);
//   - JSON: the Report struct itself, schema_version first, field order fixed by the
//     struct and map keys sorted (WriteJSON), so two runs diff cleanly;
//   - JUnit XML: one testsuite per target, one testcase per scenario; FAIL is a failure,
//     N/A is skipped, UNKNOWN is an error, NON-STRICT a failure only under strict
//     (WriteJUnit);
//   - one self-contained HTML file: a scenarios × targets matrix coloured by verdict and,
//     per result, the attempt timeline as an inline SVG sequence diagram
//     client → proxy → upstream (WriteHTML). No scripts, no external assets.

//   - Markdown small enough for a pull request comment or $GITHUB_STEP_SUMMARY: counts,
//     failing and UNKNOWN results with one line of evidence and the repeat command, known
//     failures, skipped scenarios, and the matrix of several targets (WriteMarkdown).
//
// The console, JUnit and HTML reports show the attempts a checker blamed (verdict.Evidence.Blame): in the
// timelines their answer is marked "✗ want …" (a red arrow in the diagram), and their
// body is shown as JSON text with, where the rule compared it with the committed
// response, the members that differ (package internal/bodytext). The journal has no
// link to the client's history; a blamed answer is matched to its journal record by key,
// attempt ordinal and status.
//
// A result a baseline already had failing (Result.KnownFailure) is listed as a known
// failure by every renderer and does not fail the run (FailsRun).
//
// WriteDir writes all four files into a folder, each through a temporary file and a
// rename, so a reader never sees a half-written report.
//
// The package reads the contract types of package scenarios, and the catalogue's steps to
// name a record's payloads (P2=operation.altered_body); it never runs anything.
// Renderers do not modify the report they are given.
package report
