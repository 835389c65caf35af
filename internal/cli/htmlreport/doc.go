// Package htmlreport renders health reports and maintain's fleet plan as
// one self-contained HTML page each: inline CSS and inline SVG charts drawn
// by html/template, no script, nothing fetched when the page is viewed.
//
// It renders what it is given and computes nothing of its own: the page of
// a table shows health.Report, the data `icectl health --output json`
// prints, and the fleet page maintain.Plan, that of `icectl maintain
// --dry-run --output json`, so every number on a page is one of theirs.
// Each such number is marked with data-k, its path in that JSON document
// (e.g. "partitions.2.data_files.small_files"), which the browser test
// reads back from the rendered DOM.
package htmlreport
