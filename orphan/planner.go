package orphan

import (
	"fmt"
	"strings"
	"time"

	"github.com/icectl/icectl/iceberg/reclaim"
)

// File is a listed file.
type File struct {
	Key     string // pathKey of the path part
	Path    string // as listed
	Size    int64
	ModTime time.Time
}

// Ref is a referenced path.
type Ref struct {
	Key  string
	Path string
}

// PrefixMode is what to do with a listed file that matches a reference
// by path but not by scheme or authority.
type PrefixMode int

const (
	// PrefixError reports every such file and deletes nothing.
	PrefixError PrefixMode = iota
	// PrefixIgnore keeps them.
	PrefixIgnore
	// PrefixDelete treats them as orphans.
	PrefixDelete
)

// ParsePrefixMode parses error, ignore or delete.
func ParsePrefixMode(s string) (PrefixMode, error) {
	switch strings.ToLower(s) {
	case "error":
		return PrefixError, nil
	case "ignore":
		return PrefixIgnore, nil
	case "delete":
		return PrefixDelete, nil
	}
	return 0, fmt.Errorf("%q: want error, ignore or delete", s)
}

func (m PrefixMode) String() string {
	return [...]string{"error", "ignore", "delete"}[m]
}

// Verdict is the planner's decision for one listed file.
type Verdict int

const (
	Referenced Verdict = iota // a reference names it
	Young                     // modified at or after the cutoff (or at an unknown time)
	Hidden                    // a path component starts with '_' or '.' (Java's rule)
	InTrash                   // under the trash directory of --trash
	Marker                    // a directory marker object (key ending in '/')
	Ignored                   // prefix mismatch, --prefix-mismatch ignore
	Conflict                  // prefix mismatch, --prefix-mismatch error
	Orphan                    // to be deleted (or moved to the trash)
	// Journal is an expiry journal in the table's metadata directory: a
	// pending list of deletions the next `icectl expire` finishes (and
	// then removes). Deleting it would leave those files behind for good.
	Journal
)

// Reasons given for orphans.
const (
	ReasonUnreferenced = "not referenced by any snapshot, metadata file or statistics file"
	reasonMismatch     = "referenced only as %s (%s); --prefix-mismatch delete"
)

// Planner decides about listed files. It is pure: everything it needs is
// in its fields and arguments.
type Planner struct {
	Root     string // listing root, ending in '/'
	TrashKey string // pathKey of the trash directory plus '/', or ""
	// MetadataKey is the pathKey of the table's metadata directory plus
	// '/' (or ""): expiry journals directly in it are never orphans.
	MetadataKey string
	Cutoff      time.Time
	Match       Matcher
	Mode        PrefixMode
}

// Decision is a verdict with its explanation.
type Decision struct {
	Verdict Verdict
	// Reason explains an Orphan; for a Conflict it says how the paths
	// differ.
	Reason string
	// ReferencedAs is the reference of a Conflict or of an Orphan by
	// prefix mismatch.
	ReferencedAs string
}

// Decide classifies f given the references with the same key (refs may be
// empty). Checks run from the cheapest safety rule to the most specific,
// so a file is an orphan only when nothing keeps it.
func (p *Planner) Decide(f File, refs []Ref) Decision {
	switch {
	case strings.HasSuffix(f.Path, "/"):
		return Decision{Verdict: Marker}
	case p.TrashKey != "" && strings.HasPrefix(f.Key+"/", p.TrashKey):
		return Decision{Verdict: InTrash}
	case hidden(strings.TrimPrefix(f.Path, p.Root)):
		return Decision{Verdict: Hidden}
	case p.isJournal(f.Key):
		return Decision{Verdict: Journal}
	}
	fu := splitURI(f.Path)
	var mismatch, refPath string
	for _, r := range refs {
		m := p.Match.mismatch(fu, splitURI(r.Path))
		if m == "" {
			return Decision{Verdict: Referenced}
		}
		if mismatch == "" {
			mismatch, refPath = m, r.Path
		}
	}
	// A file of unknown age is as young as can be.
	if f.ModTime.IsZero() || !f.ModTime.Before(p.Cutoff) {
		return Decision{Verdict: Young}
	}
	if mismatch != "" {
		switch p.Mode {
		case PrefixIgnore:
			return Decision{Verdict: Ignored}
		case PrefixDelete:
			return Decision{Verdict: Orphan, Reason: fmt.Sprintf(reasonMismatch, refPath, mismatch), ReferencedAs: refPath}
		}
		return Decision{Verdict: Conflict, Reason: mismatch, ReferencedAs: refPath}
	}
	return Decision{Verdict: Orphan, Reason: ReasonUnreferenced}
}

// isJournal reports whether key names an expiry journal directly in the
// metadata directory, where expire writes and looks for them. A journal is
// kept whatever its age: a run killed after its commit leaves it for the
// next expire, however long that takes.
func (p *Planner) isJournal(key string) bool {
	name, ok := strings.CutPrefix(key, p.MetadataKey)
	return p.MetadataKey != "" && ok && !strings.Contains(name, "/") && reclaim.IsJournalName(name)
}

// hidden reports whether a path relative to the listing root has a
// component starting with '_' or '.', as Hadoop's hidden files (_SUCCESS,
// _temporary/, .crc files) do. A component holding '=' is a partition
// directory (_bucket=3) and is not hidden.
func hidden(rel string) bool {
	for c := range strings.SplitSeq(rel, "/") {
		if (strings.HasPrefix(c, "_") || strings.HasPrefix(c, ".")) && !strings.Contains(c, "=") {
			return true
		}
	}
	return false
}

// Join walks files and refs, both in ascending key order, and calls fn for
// each file with the references that share its key. next functions return
// false at the end; their errors are the caller's to check.
func Join(nextFile func() (File, bool), nextRef func() (Ref, bool), fn func(File, []Ref) error) error {
	var group []Ref // references with key == group key
	groupKey := ""
	var refErr error
	prevRef := ""
	readRef := func() (Ref, bool) {
		r, ok := nextRef()
		if ok && r.Key < prevRef {
			// A reference out of order could hide behind the cursor and
			// let its file be called an orphan.
			refErr = fmt.Errorf("orphan: referenced set out of order: %q after %q", r.Key, prevRef)
			return Ref{}, false
		}
		prevRef = r.Key
		return r, ok
	}
	ref, haveRef := readRef()
	var lastFile string
	first := true
	for f, ok := nextFile(); ok; f, ok = nextFile() {
		if !first && f.Key < lastFile {
			return fmt.Errorf("orphan: listing out of order: %q after %q", f.Key, lastFile)
		}
		first, lastFile = false, f.Key
		if len(group) == 0 || groupKey != f.Key {
			group = group[:0]
			for haveRef && ref.Key < f.Key {
				ref, haveRef = readRef()
			}
			for haveRef && ref.Key == f.Key {
				group = append(group, ref)
				ref, haveRef = readRef()
			}
			groupKey = f.Key
		}
		if refErr != nil {
			return refErr
		}
		if err := fn(f, group); err != nil {
			return err
		}
	}
	return nil
}
